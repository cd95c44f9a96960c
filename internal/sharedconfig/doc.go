// Package sharedconfig keeps the runtime configuration that all proxies of
// a cluster share — users, query rules, node weights, operator drains and
// the writer policy — in one etcd key. A change made through any proxy's
// admin interface is published there and applied by every proxy; a new
// proxy started with little more than the discovery endpoint comes up
// with the whole configuration. Passwords are sealed with a key kept
// beside each proxy's configuration, never stored in clear text.
package sharedconfig

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/galeon-db/galeon/internal/config"
)

// Doc is the shared configuration as stored in etcd (JSON).
type Doc struct {
	Format int `json:"format"`
	// KeyID names the key the secrets are sealed with.
	KeyID      string                    `json:"key_id"`
	Users      []User                    `json:"users"`
	QueryRules []config.QueryRule        `json:"query_rules"`
	Weights    map[string]config.Weights `json:"weights"`
	Drained    []string                  `json:"drained"`
	Galera     Galera                    `json:"galera"`
	UpdatedBy  string                    `json:"updated_by"`
	UpdatedAt  time.Time                 `json:"updated_at"`
}

// User is an account with its passwords sealed. A password configured as
// a mysql_native_password hash ("*HEX") is kept as such (it is already
// a hash) but sealed all the same.
type User struct {
	Name                  string `json:"name"`
	SealedPassword        string `json:"sealed_password,omitempty"`
	BackendUser           string `json:"backend_user,omitempty"`
	SealedBackendPassword string `json:"sealed_backend_password,omitempty"`
	DefaultHostgroup      string `json:"default_hostgroup,omitempty"`
	DefaultSchema         string `json:"default_schema,omitempty"`
	MaxConnections        int    `json:"max_connections,omitempty"`
	AuthPlugin            string `json:"auth_plugin,omitempty"`
	LocalInfile           *bool  `json:"local_infile,omitempty"`
}

// Galera is the shared writer policy and the monitor account.
type Galera struct {
	Failback              string `json:"failback"`
	WriterIsAlsoReader    string `json:"writer_is_also_reader"`
	MonitorUser           string `json:"monitor_user,omitempty"`
	SealedMonitorPassword string `json:"sealed_monitor_password,omitempty"`
}

// Encode turns a proxy's runtime configuration and monitor account into
// a document, sealing every password with key.
func Encode(rt config.Runtime, monitorUser, monitorPassword string, key Key, by string) ([]byte, error) {
	d := Doc{Format: 1, KeyID: key.ID, QueryRules: rt.QueryRules, Weights: rt.Weights, Drained: rt.Drained,
		Galera:    Galera{Failback: rt.Failback, WriterIsAlsoReader: rt.WriterIsAlsoReader, MonitorUser: monitorUser},
		UpdatedBy: by, UpdatedAt: time.Now().UTC()}
	var err error
	if d.Galera.SealedMonitorPassword, err = key.Seal(monitorPassword); err != nil {
		return nil, err
	}
	for _, u := range rt.Users {
		su := User{Name: u.Name, BackendUser: u.BackendUser, DefaultHostgroup: u.DefaultHostgroup, DefaultSchema: u.DefaultSchema,
			MaxConnections: u.MaxConnections, AuthPlugin: u.AuthPlugin, LocalInfile: u.LocalInfile}
		if su.SealedPassword, err = key.Seal(u.Password); err != nil {
			return nil, err
		}
		if su.SealedBackendPassword, err = key.Seal(u.BackendPassword); err != nil {
			return nil, err
		}
		d.Users = append(d.Users, su)
	}
	return json.Marshal(d)
}

// Decoded is a document opened with the proxy's key.
type Decoded struct {
	Runtime                      config.Runtime
	MonitorUser, MonitorPassword string
	UpdatedBy                    string
	UpdatedAt                    time.Time
}

// Decode opens and validates a document: a value that does not parse,
// was sealed with another key, or fails validation is an error naming
// the key and the problem, and must not be applied.
func Decode(key string, value []byte, k Key) (Decoded, error) {
	var d Doc
	if err := json.Unmarshal(value, &d); err != nil {
		return Decoded{}, fmt.Errorf("%s: not a galeon shared configuration: %v", key, err)
	}
	if d.Format != 1 {
		return Decoded{}, fmt.Errorf("%s: format %d is not one this galeon reads (1)", key, d.Format)
	}
	if d.KeyID != k.ID {
		return Decoded{}, fmt.Errorf("%s: secrets sealed with key %s, this proxy has key %s: copy discovery.secret_key_file from a proxy of the cluster", key, d.KeyID, k.ID)
	}
	out := Decoded{UpdatedBy: d.UpdatedBy, UpdatedAt: d.UpdatedAt, MonitorUser: d.Galera.MonitorUser}
	rt := config.Runtime{QueryRules: d.QueryRules, Weights: d.Weights, Drained: d.Drained,
		Failback: d.Galera.Failback, WriterIsAlsoReader: d.Galera.WriterIsAlsoReader}
	var err error
	if out.MonitorPassword, err = k.Open(d.Galera.SealedMonitorPassword); err != nil {
		return Decoded{}, fmt.Errorf("%s: galera.monitor_password: %v", key, err)
	}
	for _, su := range d.Users {
		u := config.User{Name: su.Name, BackendUser: su.BackendUser, DefaultHostgroup: su.DefaultHostgroup, DefaultSchema: su.DefaultSchema,
			MaxConnections: su.MaxConnections, AuthPlugin: su.AuthPlugin, LocalInfile: su.LocalInfile}
		if u.Password, err = k.Open(su.SealedPassword); err != nil {
			return Decoded{}, fmt.Errorf("%s: users %s password: %v", key, su.Name, err)
		}
		if u.BackendPassword, err = k.Open(su.SealedBackendPassword); err != nil {
			return Decoded{}, fmt.Errorf("%s: users %s backend_password: %v", key, su.Name, err)
		}
		rt.Users = append(rt.Users, u)
	}
	if rt.Weights == nil {
		rt.Weights = map[string]config.Weights{}
	}
	if err := rt.Validate(); err != nil {
		return Decoded{}, fmt.Errorf("%s: %v", key, err)
	}
	out.Runtime = rt
	return out, nil
}

// Merge makes cfg's runtime parts those of the document, for a proxy
// starting up: its file's users, rules, policy, monitor account and the
// weights of its configured servers give way to the cluster's.
func Merge(cfg *config.Config, d Decoded) {
	rt := d.Runtime
	cfg.Users, cfg.QueryRules = rt.Users, rt.QueryRules
	cfg.Galera.Failback, cfg.Galera.WriterIsAlsoReader = rt.Failback, rt.WriterIsAlsoReader
	if d.MonitorUser != "" {
		cfg.Galera.MonitorUser, cfg.Galera.MonitorPassword = d.MonitorUser, d.MonitorPassword
	}
	for i, s := range cfg.Servers {
		if w, ok := rt.Weights[s.Name]; ok {
			cfg.Servers[i].WriterWeight, cfg.Servers[i].ReaderWeight = w.Writer, w.Reader
		}
	}
}

// FromConfig is the runtime configuration a configuration file gives.
func FromConfig(cfg *config.Config) config.Runtime {
	rt := config.Runtime{Users: cfg.Users, QueryRules: cfg.QueryRules, Weights: map[string]config.Weights{},
		Failback: cfg.Galera.Failback, WriterIsAlsoReader: cfg.Galera.WriterIsAlsoReader}
	for _, s := range cfg.Servers {
		rt.Weights[s.Name] = config.Weights{Writer: s.WriterWeight, Reader: s.ReaderWeight}
	}
	return rt
}
