package galera

import "fmt"

// Clustercheck answers what HAProxy's httpchk asks of a node, the way
// Percona's clustercheck script does: may this node take traffic? Yes when
// it is Synced (wsrep_local_state 4) in a Primary component and ready; a
// Donor/Desynced node (2) only with allowDonor (for a non-blocking SST
// method). status holds SHOW GLOBAL STATUS LIKE 'wsrep%' by lower-case
// name. why says what is wrong, or what is right.
func Clustercheck(status map[string]string, allowDonor bool) (ok bool, why string) {
	state, comment := status["wsrep_local_state"], status["wsrep_local_state_comment"]
	switch {
	case len(status) == 0:
		return false, "no wsrep status: not a Galera node, or not reachable"
	case status["wsrep_cluster_status"] != "Primary":
		return false, fmt.Sprintf("not in a Primary component (wsrep_cluster_status=%s)", status["wsrep_cluster_status"])
	case status["wsrep_ready"] != "ON":
		return false, "wsrep_ready=OFF"
	case state == "4":
		return true, "Synced"
	case state == "2" && allowDonor:
		return true, "Donor/Desynced (allowed)"
	}
	return false, fmt.Sprintf("not Synced (wsrep_local_state=%s %s)", state, comment)
}
