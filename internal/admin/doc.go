// Package admin serves galeon's operator interface: a MySQL-protocol
// endpoint (like ProxySQL's admin port 6032) where the running
// configuration is read and changed with SQL, and an HTTP endpoint with
// Prometheus metrics, a JSON view of the same tables, the web dashboard
// and its few actions.
//
// # Tables, not the proxy
//
// The package knows nothing about the proxy. The proxy registers [Table]
// values: a name, typed columns, a function returning the current rows and
// optional functions that apply UPDATE, INSERT and DELETE. Rows are read
// fresh on every query, so the admin interface never shows a stale copy and
// there is no second source of truth to keep in sync. Every change goes
// through the table's own function, which validates it and applies it
// atomically; the admin side only parses, type-checks against the declared
// columns and evaluates WHERE clauses into a match function.
//
// # The dialect
//
// The SQL understood here is a deliberately small dialect (see [Parse]):
// single-table SELECT with WHERE / ORDER BY / LIMIT and COUNT(*), UPDATE,
// INSERT of one row, DELETE, and the SHOW / DESCRIBE / SET / SELECT @@var
// statements that the mariadb and mysql command-line clients and Go's
// go-sql-driver/mysql send on their own. Anything else gets a MySQL error
// that says what was expected, and the connection stays usable. Prepared
// statements are refused: operators type plain queries, and drivers can
// interpolate parameters client-side (go-sql-driver: interpolateParams=true).
//
// Text comparisons with = and < follow byte order (case-sensitive), while
// LIKE ignores case, as in SQLite, which ProxySQL's admin interface
// is built on and whose behaviour operators know.
//
// # HTTP
//
// GET /metrics is handed to the metrics handler the server was given (the
// process's Prometheus registry, see package metrics), without
// authentication, for scrapers; GET /api/health answers
// load balancers. GET /api/tables and /api/tables/{name} show the same
// tables as JSON behind basic auth with the admin account, and /ui/ the
// web dashboard. The only change over HTTP is POST /api/actions (drain,
// undrain, switchover), which runs the same SQL an operator would type:
// every change goes through SQL, where it is type-checked, serialised and
// audited.
//
// # Use
//
//	srv := admin.NewServer(admin.Config{User: "admin", Password: pw}, tables, metricsHandler)
//	if err := srv.Listen(); err != nil { ... } // optional: fail fast on a busy port
//	go srv.Serve(ctx)                          // returns after ctx is done and all goroutines ended
//
// # Concurrency
//
// Rows may be called from several connections at once. Update, Insert and
// Delete are serialised by the server (never two at a time) so a table
// only has to make each call atomic with respect to the proxy itself.
package admin
