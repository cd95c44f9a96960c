package replica

import (
	"fmt"
	"sort"
	"strings"
)

// SourceVariables are the server variables CheckSource reads.
var SourceVariables = []string{"log_bin", "log_slave_updates", "wsrep_gtid_mode", "wsrep_gtid_domain_id", "gtid_domain_id", "binlog_format"}

// CheckSource says what makes one Galera node unsafe as an asynchronous
// replication source that replicas can move to and from (none: safe).
// vars are its variables by lower-case name, ON/OFF as MariaDB shows them.
func CheckSource(vars map[string]string) []string {
	var out []string
	on := func(k string) bool { return strings.EqualFold(vars[k], "ON") || vars[k] == "1" }
	if !on("log_bin") {
		out = append(out, "log_bin is OFF: the node keeps no binary log for a replica to read")
	}
	if !on("log_slave_updates") {
		out = append(out, "log_slave_updates is OFF: the node does not log what it applies from the other nodes, so a replica moved here would miss their transactions")
	}
	if !on("wsrep_gtid_mode") {
		out = append(out, "wsrep_gtid_mode is OFF: each node numbers the cluster's transactions its own way, so a replica cannot move from one node to another by GTID")
	}
	if f := vars["binlog_format"]; f != "" && !strings.EqualFold(f, "ROW") {
		out = append(out, "binlog_format is "+f+": Galera and a replica that changes source need ROW")
	}
	if d := vars["gtid_domain_id"]; d != "" && d == vars["wsrep_gtid_domain_id"] && on("wsrep_gtid_mode") {
		out = append(out, "gtid_domain_id equals wsrep_gtid_domain_id ("+d+"): a write that Galera does not replicate (sql_log_bin aside, a non-InnoDB table) would take a number in the cluster's domain on this node alone, and the nodes' numbering would part; give each node a gtid_domain_id of its own")
	}
	return out
}

// CheckCluster says what, across the nodes, keeps a replica from moving
// between them: the cluster's domain must be one (wsrep_gtid_domain_id
// equal everywhere). nodes are each node's variables by name.
func CheckCluster(nodes map[string]map[string]string) []string {
	domains := map[string][]string{}
	for name, v := range nodes {
		domains[v["wsrep_gtid_domain_id"]] = append(domains[v["wsrep_gtid_domain_id"]], name)
	}
	if len(domains) <= 1 {
		return nil
	}
	var parts []string
	for d, names := range domains {
		sort.Strings(names)
		parts = append(parts, fmt.Sprintf("%s on %s", d, strings.Join(names, ", ")))
	}
	sort.Strings(parts)
	return []string{"wsrep_gtid_domain_id differs between nodes (" + strings.Join(parts, "; ") + "): the cluster's transactions must be numbered in one domain on every node"}
}
