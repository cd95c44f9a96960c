package sandbox

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// GaleraLibrary is where Debian's galera-4 package installs the provider.
const GaleraLibrary = "/usr/lib/galera/libgalera_smm.so"

// defaultProviderOptions are tuned for a loopback cluster: a dead node is
// evicted in about 3 s instead of about 6 s with Galera's defaults, and the
// gcache is large enough that a restarted node rejoins by IST.
//
// FIELD-NOTES.md measured 2.1 s eviction with suspect 1 s / inactive 3 s /
// keepalive 0.3 s, but with those a node rejoining after kill -9 often
// cycled through install timeouts and non-Primary views for 20-60 s, even
// on a quiet machine (install_timeout then defaults to inactive/2 = 1.5 s,
// too short for a view change during a state transfer). Suspect 2 s,
// inactive and install 6 s, keepalive 0.5 s keep eviction near 3 s and
// rejoins reliable. Override with --provider-option.
func defaultProviderOptions() map[string]string {
	return map[string]string{
		"evs.suspect_timeout":  "PT2S",
		"evs.inactive_timeout": "PT6S",
		"evs.install_timeout":  "PT6S",
		"evs.keepalive_period": "PT0.5S",
		"gcache.size":          "64M",
		"pc.recovery":          "true",
	}
}

// defaultServerOptions keep a node small (several fit on a 2-core machine)
// and set what Galera requires (ROW binlog format, interleaved autoinc).
func defaultServerOptions() map[string]string {
	return map[string]string{
		"innodb_buffer_pool_size":        "64M",
		"innodb_log_file_size":           "32M",
		"innodb_flush_log_at_trx_commit": "2",
		"innodb_autoinc_lock_mode":       "2",
		"binlog_format":                  "ROW",
		"default_storage_engine":         "InnoDB",
		"performance_schema":             "OFF",
		"max_connections":                "1000",
		"skip_name_resolve":              "ON",
		"wsrep_slave_threads":            "2",
		"wsrep_sync_wait":                "0",
	}
}

// idSeries gives each node an AUTO_INCREMENT series of its own that does
// not change when a node leaves: increment = the highest node number,
// offset = the node's number. Galera's default
// (wsrep_auto_increment_control) renumbers the survivors' series at every
// view change (increment = the new cluster size), so after a writer is
// lost the new writer can hand out an id the old one gave to a
// transaction it never committed, and galeon's replay of that transaction
// (which must give the client's row the id the client saw) then fails.
// With fixed series no node ever hands out another node's ids; a 3-node
// cluster numbers as densely as before (1, 4, 7 … on node1).
func (s *State) idSeries(n Node) map[string]string {
	return map[string]string{
		"wsrep_auto_increment_control": "OFF",
		"auto_increment_increment":     strconv.Itoa(s.idSlots()),
		"auto_increment_offset":        strconv.Itoa(n.Index),
	}
}

// idSlots is the AUTO_INCREMENT increment of every node: the highest
// node number there has been (IDSlots), so every node's offset fits under
// it and a node's removal does not narrow anyone's series.
func (s *State) idSlots() int {
	slots := max(1, s.IDSlots)
	for _, n := range s.Nodes {
		slots = max(slots, n.Index)
	}
	return slots
}

func merged(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (s *State) clusterAddress() string {
	addrs := make([]string, 0, len(s.Nodes)+len(s.Arbitrators))
	for _, n := range s.Nodes {
		addrs = append(addrs, n.host()+":"+strconv.Itoa(n.GaleraPort))
	}
	for _, a := range s.Arbitrators {
		addrs = append(addrs, a.addr())
	}
	return "gcomm://" + strings.Join(addrs, ",")
}

// myCnf renders the option file of node n. The sandbox-specific settings
// (paths, ports, addresses) come last and cannot be overridden: they are
// what keeps nodes and sandboxes apart.
func (s *State) myCnf(n Node) string {
	if n.Replica {
		return s.replicaCnf(n)
	}
	var b strings.Builder
	b.WriteString("# Written by galeon sandbox; regenerated on start, edit sandbox.json options instead.\n[mariadbd]\n")
	server := merged(merged(defaultServerOptions(), s.idSeries(n)), s.ServerOptions)
	if s.ReadOnlyDR() {
		// Clients must not write to a cluster that replicates another:
		// its replication and Galera's appliers ignore read_only.
		server["read_only"] = "ON"
	}
	for _, k := range sortedKeys(server) {
		fmt.Fprintf(&b, "%s = %s\n", k, server[k])
	}
	provider := merged(defaultProviderOptions(), s.ProviderOptions)
	h := n.host()
	provider["gmcast.listen_addr"] = "tcp://" + h + ":" + strconv.Itoa(n.GaleraPort)
	provider["ist.recv_addr"] = h + ":" + strconv.Itoa(n.ISTPort)
	if n.Site != "" {
		provider["gmcast.segment"] = strconv.Itoa(n.Segment)
	}
	if n.Weight != nil {
		provider["pc.weight"] = strconv.Itoa(*n.Weight)
	}
	opts := make([]string, 0, len(provider))
	for _, k := range sortedKeys(provider) {
		opts = append(opts, k+"="+provider[k])
	}
	b.WriteString(s.placeCnf(n))
	fmt.Fprintf(&b, `wsrep_on = ON
wsrep_provider = %s
wsrep_provider_options = "%s"
wsrep_cluster_name = %s
wsrep_cluster_address = %s
wsrep_node_name = %s
wsrep_node_address = %s:%d
wsrep_node_incoming_address = %s:%d
wsrep_sst_receive_address = %s:%d
wsrep_sst_method = %s
`, GaleraLibrary, strings.Join(opts, "; "), s.Name, s.clusterAddress(),
		n.Name, h, n.GaleraPort, h, n.Port, h, n.SSTPort, s.SSTMethod)
	if s.SSTMethod == "mariabackup" {
		fmt.Fprintf(&b, "wsrep_sst_auth = %s:%s\n", s.Credentials.SSTUser, s.Credentials.SSTPassword)
	}
	if s.ReplicationSource {
		b.WriteString(s.sourceCnf(n))
	}
	if s.TLS {
		// The SST scripts would pick these up and encrypt the state
		// transfer with stunnel; clients get TLS, SST stays plain.
		ca, cert, key := s.TLSFiles()
		fmt.Fprintf(&b, "ssl_ca = %s\nssl_cert = %s\nssl_key = %s\n\n[sst]\nssl-mode = DISABLED\n", ca, cert, key)
	}
	b.WriteString("\n[client]\nsocket = " + s.socket(n) + "\n")
	return b.String()
}

// placeCnf is where node n keeps its files and listens: what keeps nodes
// and sandboxes apart.
func (s *State) placeCnf(n Node) string {
	return fmt.Sprintf(`
datadir = %s
socket = %s
pid-file = %s
log-error = %s
port = %d
bind-address = %s
tmpdir = %s
`, s.dataDir(n), s.socket(n), s.pidPath(n), s.errLog(n), n.Port, n.host(), s.nodeDir(n))
}

func (s *State) writeMyCnf(n Node) error {
	// Owned by mysql, mode 0600: mariadbd (running as mysql) must read it,
	// and it may hold the mariabackup SST password.
	if err := os.WriteFile(s.cnfPath(n), []byte(s.myCnf(n)), 0o600); err != nil {
		return err
	}
	return chownMysql(s.cnfPath(n))
}
