// Package proxy is galeon's MySQL-protocol data plane: it accepts client
// connections, authenticates them itself, and runs every statement on a
// backend connection borrowed from the pool of the node the router picks.
//
// The hot path follows TiProxy's packet layer: one buffered reader and
// writer per connection, result sets relayed as raw packets (rows are never
// decoded), one flush per response, and a first-word classifier
// (internal/sqlclass) instead of a parser. A session tracks what makes it
// stateful (schema, session variables, prepared statements, transactions,
// and the state that cannot be replayed: temporary tables, user variables,
// locks) so that stateless sessions share backend connections
// (multiplexing), replayable state follows a session to whichever
// connection it gets, and the rest pins the session to one connection.
package proxy
