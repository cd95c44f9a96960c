// Package discovery is galeon's control-plane store: etcd, either embedded
// in the galeon process (a single member on loopback, the default: one
// machine, nothing to install) or an external etcd cluster, reached
// through one code path, the etcd v3 client. It owns the key layout under
// /galeon/<cluster>/, node registration under leases (a node whose agent
// dies disappears when its lease expires) and watches that turn etcd
// events into whole, validated snapshots.
//
// galeon never implements consensus itself: etcd's Raft does it, and
// elections use etcd's concurrency package.
package discovery
