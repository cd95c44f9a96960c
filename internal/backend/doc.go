// Package backend owns galeon's connections to database nodes: dialing and
// authenticating, one pool per node and connection profile, health on
// borrow, idle expiry and the per-node counters the admin interface shows.
//
// A backend connection remembers the session state it carries (schema,
// session variables, prepared statements), so a client session borrowing
// it only sends the difference (state replay) instead of resetting it on
// every return: that is what makes multiplexing cheap.
package backend
