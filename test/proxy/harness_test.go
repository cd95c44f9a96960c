// Package proxy_test runs galeon's proxy in front of a real 3-node Galera
// sandbox and drives it with real clients: go-sql-driver/mysql, the
// mariadb CLI, PyMySQL and sysbench.
package proxy_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/assemble"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/proxy/proxytest"
	"github.com/galeon-db/galeon/internal/sandbox"
)

// proxyUnderTest is a running proxy and how to reach it.
type proxyUnderTest struct {
	p         *proxy.Proxy
	cfg       *config.Config
	addr      string
	adminAddr string
	httpAddr  string
	sb        *sandbox.Sandbox
}

// adminPassword is the test proxies' admin password.
const adminPassword = "test-admin-pw"

// baseConfig routes writes to node1 and reads to node2 and node3.
func baseConfig(sb *sandbox.Sandbox) *config.Config {
	cfg := proxytest.Config(sb)
	cfg.Proxy.NoBackendWait = config.Duration(2 * time.Second)
	cfg.Pool.HealthInterval = config.Duration(200 * time.Millisecond)
	c := sb.Credentials
	cfg.Users = []config.User{{Name: c.AppUser, Password: c.AppPassword}}
	return cfg
}

// startProxy runs a proxy in this process until the test ends.
func startProxy(t *testing.T, sb *sandbox.Sandbox, mutate func(*config.Config)) *proxyUnderTest {
	t.Helper()
	cfg := baseConfig(sb)
	if mutate != nil {
		mutate(cfg)
	}
	if problems := cfg.Validate(); len(problems) > 0 {
		t.Fatalf("test config invalid: %v", problems)
	}
	cfg.Admin.Listen, cfg.Admin.HTTPListen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Admin.User, cfg.Admin.Password = "admin", adminPassword
	a := proxytest.StartWith(t, assemble.Options{Config: cfg, Admin: true})
	return &proxyUnderTest{p: a.Proxy, cfg: cfg, addr: a.Addr, adminAddr: a.Admin.SQLAddr().String(), httpAddr: a.Admin.HTTPAddr().String(), sb: sb}
}

// dsn is a go-sql-driver DSN through the proxy as the app user.
func (pt *proxyUnderTest) dsn(mod func(*mysql.Config)) string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = pt.sb.Credentials.AppUser, pt.sb.Credentials.AppPassword, "tcp", pt.addr
	cfg.DBName = "app"
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 30*time.Second, 30*time.Second
	if mod != nil {
		mod(cfg)
	}
	return cfg.FormatDSN()
}

// adminDB connects to the proxy's admin SQL interface.
func (pt *proxyUnderTest) adminDB(t *testing.T) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.InterpolateParams = "admin", adminPassword, "tcp", pt.adminAddr, true
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func (pt *proxyUnderTest) db(t *testing.T, mod func(*mysql.Config)) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", pt.dsn(mod))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string, args ...any) sql.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return res
}

type queryer interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

func str(t *testing.T, q queryer, query string, args ...any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var v sql.NullString
	if err := q.QueryRowContext(ctx, query, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v.String
}

// mysqlErr returns the MySQL error number of err, or 0.
func mysqlErr(err error) uint16 {
	var me *mysql.MySQLError
	if ok := asErr(err, &me); ok {
		return me.Number
	}
	return 0
}

func asErr(err error, target **mysql.MySQLError) bool {
	for err != nil {
		if e, ok := err.(*mysql.MySQLError); ok {
			*target = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}
