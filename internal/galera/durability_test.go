package galera

import (
	"strings"
	"testing"
)

func TestDurabilityRisk(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		want []string
	}{
		{map[string]string{"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "0", "log_bin": "OFF"}, nil},
		{map[string]string{"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "1", "log_bin": "ON"}, nil},
		{map[string]string{"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0", "log_bin": "OFF"}, []string{"innodb_flush_log_at_trx_commit=2", "power loss"}},
		{map[string]string{"innodb_flush_log_at_trx_commit": "0"}, []string{"innodb_flush_log_at_trx_commit=0"}},
		{map[string]string{"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "0", "log_bin": "ON"}, []string{"sync_binlog=0 with the binary log on"}},
		{map[string]string{"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "100", "log_bin": "ON"}, []string{"innodb_flush_log_at_trx_commit=2", "; sync_binlog=100"}},
		{map[string]string{}, nil}, // not read (an older poll): nothing said
	} {
		got := DurabilityRisk(c.vars)
		if (got == "") != (len(c.want) == 0) {
			t.Errorf("DurabilityRisk(%v) = %q, want %v", c.vars, got, c.want)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("DurabilityRisk(%v) = %q, want …%s…", c.vars, got, w)
			}
		}
	}
}
