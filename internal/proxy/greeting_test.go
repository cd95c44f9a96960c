package proxy

import (
	"testing"

	mp "github.com/galeon-db/galeon/internal/mysqlproto"
)

func TestPresentedCaps(t *testing.T) {
	// MariaDB 10.11 as a node: CLIENT_MYSQL clear, extended capabilities
	// (progress, bulk, extended metadata, cache metadata) set.
	mariadb := mp.DefaultServerCapabilities&^mp.ClientMySQL | mp.ClientCompress | mp.ClientSSL | mp.ClientLocalFiles |
		mp.MariaDBClientProgress | mp.MariaDBClientStmtBulkOperations | mp.MariaDBClientExtendedMetadata | mp.MariaDBClientCacheMetadata
	got := presentedCaps(mariadb, false, false)
	for _, want := range []mp.Capability{mp.MariaDBClientStmtBulkOperations, mp.MariaDBClientExtendedMetadata, mp.ClientLocalFiles, mp.ClientDeprecateEOF} {
		if !got.Has(want) {
			t.Errorf("MariaDB node: %#x not offered", uint64(want))
		}
	}
	for _, not := range []mp.Capability{mp.ClientMySQL, mp.MariaDBClientProgress, mp.MariaDBClientCacheMetadata, mp.ClientCompress, mp.ClientSSL} {
		if got&not != 0 {
			t.Errorf("MariaDB node, no compression or TLS configured: %#x offered", uint64(not))
		}
	}
	if got := presentedCaps(mariadb, true, true); !got.Has(mp.ClientCompress | mp.ClientSSL) {
		t.Errorf("compression and TLS configured but not offered")
	}
	// A MySQL 8 node: CLIENT_MYSQL set, query attributes and optional
	// metadata offered (galeon does not relay them), no extended bits.
	mysql := mp.DefaultServerCapabilities | mp.ClientQueryAttributes | mp.ClientOptionalResultsetMetadata | mp.ClientZstdCompressionAlgorithm
	got = presentedCaps(mysql, true, false)
	if !got.Has(mp.ClientMySQL) || got>>32 != 0 {
		t.Errorf("MySQL node: want CLIENT_MYSQL and no extended capabilities, got %#x", uint64(got))
	}
	if got&(mp.ClientQueryAttributes|mp.ClientOptionalResultsetMetadata|mp.ClientZstdCompressionAlgorithm) != 0 {
		t.Errorf("MySQL node: offers what galeon does not relay: %#x", uint64(got))
	}
}
