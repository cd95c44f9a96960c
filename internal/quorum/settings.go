package quorum

import "fmt"

// ClusterGTIDDomain is the GTID domain the settings number the cluster's
// transactions in (the sandbox's too).
const ClusterGTIDDomain = 100

// NodeSettings are the [mariadbd] options one data node needs beyond the
// layout's provider options: what makes the cluster a replication source
// that asynchronous replicas and a DR cluster follow across writer
// changes (binary logs with what the node applies from the others, one
// GTID numbering on every node, each node's local writes in a domain of
// their own), and AUTO_INCREMENT series that a view change never
// renumbers (a transaction replayed after the writer's loss keeps its
// ids).
type NodeSettings struct {
	Member  string
	Options []string
}

// Settings gives every data member of l its NodeSettings; ids counts the
// data nodes the cluster will ever have (the AUTO_INCREMENT increment:
// at least the number of data members).
func Settings(l Layout, ids int) []NodeSettings {
	var data []Member
	for _, m := range l.Members {
		if !m.Arbitrator {
			data = append(data, m)
		}
	}
	ids = max(ids, len(data))
	out := make([]NodeSettings, 0, len(data))
	for i, m := range data {
		out = append(out, NodeSettings{Member: m.Name, Options: []string{
			"log_bin = binlog",
			"log_slave_updates = ON",
			"server_id = 1",
			"wsrep_gtid_mode = ON",
			fmt.Sprintf("wsrep_gtid_domain_id = %d", ClusterGTIDDomain),
			fmt.Sprintf("gtid_domain_id = %d", ClusterGTIDDomain+i+1),
			"wsrep_auto_increment_control = OFF",
			fmt.Sprintf("auto_increment_increment = %d", ids),
			fmt.Sprintf("auto_increment_offset = %d", i+1),
		}})
	}
	return out
}
