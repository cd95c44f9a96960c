// Package galera knows what makes a Galera node fit to take traffic. It
// polls each node's wsrep status and variables over one persistent
// monitor connection, turns every sample into a state with a reason
// (ONLINE, DRAINING, OFFLINE: "non-Primary", "donor (rejects queries)",
// "recv queue 250 > max 100", ...), and chooses the writer with a policy
// that is a pure function of the published states: highest writer weight,
// ties by name, and sticky (a recovered node does not take the role back
// unless failback says so). The proxy consumes the result through the
// topology view and never talks to this package directly.
//
// The rules follow FIELD-NOTES.md: only a Synced node of the Primary
// component with wsrep_ready=ON takes traffic; a donor only if allowed and
// its SST method does not block; a desynced, reject_queries or
// pxc_maint_mode node drains; a lagging node leaves the readers and is
// never chosen as writer while another candidate exists.
package galera
