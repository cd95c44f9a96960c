package galera

import "fmt"

// DurabilityVariables are the settings DurabilityRisk reads.
var DurabilityVariables = []string{"innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin"}

// DurabilityRisk says, from a node's global variables (lower-case
// names), how a COMMIT the node acknowledged can still be lost, or ""
// when its settings keep what it acknowledged. Galera acknowledges a
// COMMIT once the write-set is ordered in the Primary component, so the
// crash of one node loses nothing the others hold; what the settings
// decide is a crash of every node at once (a power loss of the site):
//
//   - innodb_flush_log_at_trx_commit 0 or 2: InnoDB writes its log to
//     disk about once a second, so up to ~1 s of acknowledged commits is
//     gone from every node (Jepsen's 2026 analysis of MariaDB Galera
//     found lost commits under crashes with this setting);
//   - with the binary log on, sync_binlog 0 (or above 1): the binary log
//     lags InnoDB, and a node recovered from it (or a replica fed by it)
//     misses commits InnoDB kept.
func DurabilityRisk(v map[string]string) string {
	flush, ok := v["innodb_flush_log_at_trx_commit"]
	var risks []string
	if ok && flush != "1" {
		risks = append(risks, fmt.Sprintf("innodb_flush_log_at_trx_commit=%s: a crash of every node at once (power loss) loses up to ~1 s of acknowledged commits; 1 keeps them", flush))
	}
	if sync, ok := v["sync_binlog"]; ok && sync != "1" && isOn(v["log_bin"]) {
		risks = append(risks, fmt.Sprintf("sync_binlog=%s with the binary log on: after a crash the binary log may lack commits InnoDB kept (replicas and point-in-time recovery miss them); 1 keeps them in step", sync))
	}
	switch len(risks) {
	case 0:
		return ""
	case 1:
		return risks[0]
	}
	return risks[0] + "; " + risks[1]
}

func isOn(v string) bool { return v == "ON" || v == "1" || v == "on" }
