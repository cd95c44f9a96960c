// Package admin serves galeon's operator interface: a MySQL-protocol
// endpoint (like ProxySQL's admin port 6032) where the running
// configuration is read and changed with SQL, and an HTTP endpoint with
// Prometheus metrics, a JSON view of the same tables, the web dashboard
// and its few actions.
//
// # Tables, not the proxy
//
// The package knows nothing about the proxy. The proxy registers [Table]
// values: a name, typed columns, a function returning the current rows and,
// for writable tables, which changes they accept and an Apply function.
// Rows are read fresh for every statement, so the admin interface never
// shows a stale copy and there is no second source of truth to keep in
// sync.
//
// # The engine
//
// Statements are evaluated by SQLite (see store.go): the tables a
// statement names are loaded into a private in-memory database, the
// statement runs there (joins, GROUP BY, subqueries, UPDATE with
// expressions, INSERT ... SELECT), and for a write the rows it changed are
// compared by rowid, checked against the column kinds and handed to the
// table's Apply as one list of [Change] values, which applies all or none.
// The transaction is always rolled back. An SQLite authorizer admits only
// reads and row changes of galeon's tables.
//
// MySQL's client statements (SHOW, DESCRIBE, SET, USE, @@variables,
// DATABASE()), which the mariadb and mysql command-line clients and the
// drivers send on their own, are answered here (translate.go, show.go).
// Prepared statements are refused: operators type plain queries, and
// drivers can interpolate parameters client-side (go-sql-driver:
// interpolateParams=true).
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
// Rows may be called from several connections at once. Apply calls are
// serialised by the server (never two at a time, and none between reading
// the rows a change was computed from and applying it), so a table only
// has to make each call atomic with respect to the proxy itself.
package admin
