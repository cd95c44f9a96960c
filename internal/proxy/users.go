package proxy

import (
	"strings"
	"sync/atomic"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// user is a configured client account.
type user struct {
	name            string
	cred            mysqlproto.Credential
	plugin          string
	backendUser     string
	backendPassword string
	// defaultHostgroup: "" splits reads and writes; "writer" sends
	// everything to the writer unless a hint or rule says otherwise.
	defaultHostgroup atomic.Pointer[string]
	defaultSchema    string
	maxConns         int64
	conns            atomic.Int64
	localInfile      bool
	// localTables names the tables this account sees whose rows Galera
	// does not replicate (localtables.go).
	localTables atomic.Pointer[map[string]bool]
}

func newUser(u config.User) *user {
	out := &user{
		name: u.Name, backendUser: u.BackendUser, backendPassword: u.BackendPassword,
		defaultSchema: u.DefaultSchema, maxConns: int64(u.MaxConnections),
		plugin: mysqlproto.NativePasswordPlugin, localInfile: u.LocalInfileAllowed(),
	}
	if out.backendUser == "" {
		out.backendUser = u.Name
	}
	if strings.HasPrefix(u.Password, "*") {
		hash, err := mysqlproto.ParseNativePasswordHash(u.Password)
		if err == nil {
			out.cred = mysqlproto.Credential{NativeHash: hash}
		}
	} else {
		if u.Password == "" {
			out.cred = mysqlproto.Credential{NoPassword: true}
		} else {
			out.cred = mysqlproto.NewCredential(u.Password)
		}
		if out.backendPassword == "" {
			out.backendPassword = u.Password
		}
	}
	if u.AuthPlugin != "" {
		out.plugin = u.AuthPlugin
	}
	hg := u.DefaultHostgroup
	out.defaultHostgroup.Store(&hg)
	return out
}

func (u *user) hostgroup() string { return *u.defaultHostgroup.Load() }
