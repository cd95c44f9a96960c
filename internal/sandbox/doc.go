// Package sandbox runs real MariaDB Galera clusters on one machine, on
// loopback, for development, demos and galeon's own integration tests.
//
// A sandbox is a directory holding one sub-directory per node (datadir,
// my.cnf, error log, pid file) and a sandbox.json that records the layout,
// the ports and the generated credentials. Every operation re-reads that
// file, so the CLI (`galeon sandbox ...`) and the Go API used by tests work
// on the same sandbox interchangeably.
//
// Nodes are started directly as the `mysql` user (never as root: rsync SST
// drops to nobody and fails, see FIELD-NOTES.md) and are stopped by the PID
// the sandbox itself recorded, never by process name. The defaults are
// tuned for a loopback cluster (evs.suspect_timeout=PT2S and friends, a
// small buffer pool) and every Galera provider option or server option can
// be overridden.
package sandbox
