// Package config: the [discovery] section's store settings, checked
// here so that the configuration (and the data plane that reads it) links
// no etcd package; package discovery opens the store they describe.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
)

// EmbeddedEndpoints is the discovery.endpoints value that runs etcd inside
// the process.
const EmbeddedEndpoints = "embedded"

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// ValidName checks a cluster, node or proxy name: it becomes part of a
// control-plane key, so it is limited to letters, digits, '_', '.' and '-'.
func ValidName(what, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%s name %q: use 1-63 letters, digits, '_', '.' or '-', starting with a letter or digit", what, name)
	}
	return nil
}

// ValidateStore lists the problems of the store settings (endpoints,
// cluster, embedded etcd, TLS, authentication), each naming its key
// (discovery.*).
func (c Discovery) ValidateStore() []string {
	var out []string
	add := func(key, format string, a ...any) {
		out = append(out, "discovery."+key+": "+fmt.Sprintf(format, a...))
	}
	if err := ValidName("cluster", c.Cluster); err != nil {
		add("cluster", "%v", err)
	}
	if c.Endpoints == EmbeddedEndpoints {
		if c.DataDir == "" {
			add("data_dir", "required for the embedded etcd")
		}
		for key, a := range map[string]string{"client_listen": c.ClientListen, "peer_listen": c.PeerListen} {
			if _, _, err := net.SplitHostPort(a); a != "" && err != nil {
				add(key, "%q is not host:port", a)
			}
		}
		_, problems := c.EmbeddedMember()
		out = append(out, problems...)
	} else {
		if _, _, err := ParseEndpoints(c.Endpoints); err != nil {
			add("endpoints", "%v", err)
		}
		for key, set := range map[string]bool{"member_name": c.MemberName != "", "peers": len(c.Peers) > 0, "join": c.Join != "",
			"client_url": c.ClientURL != "", "peer_url": c.PeerURL != ""} {
			if set {
				add(key, "only with endpoints = \"embedded\" (it describes this proxy's own etcd member); an external etcd cluster is listed in endpoints")
			}
		}
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		add("cert_file", "cert_file and key_file go together")
	}
	if (c.Username == "") != (c.Password == "") {
		add("username", "username and password go together")
	}
	return out
}

// ParseEndpoints turns "etcd://h1:2379,etcds://h2:2379" into client URLs;
// secure says whether TLS is asked for.
func ParseEndpoints(s string) (urls []string, secure bool, err error) {
	if strings.TrimSpace(s) == "" {
		return nil, false, errors.New(`empty: use "embedded" or etcd://host:2379[,host:2379...]`)
	}
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		u, perr := url.Parse(e)
		if perr != nil || u.Host == "" {
			return nil, false, fmt.Errorf("%q: not a URL such as etcd://10.0.0.1:2379", e)
		}
		if _, _, herr := net.SplitHostPort(u.Host); herr != nil {
			return nil, false, fmt.Errorf("%q: the host needs a port, e.g. etcd://%s:2379", e, u.Host)
		}
		switch u.Scheme {
		case "etcd", "http":
			urls = append(urls, "http://"+u.Host)
		case "etcds", "https":
			urls = append(urls, "https://"+u.Host)
			secure = true
		default:
			return nil, false, fmt.Errorf("%q: scheme must be etcd:// or etcds://", e)
		}
	}
	return urls, secure, nil
}

// Peer is one member of an embedded etcd cluster formed together: its
// name and the peer URL the other members reach it at.
type Peer struct{ Name, URL string }

// EmbeddedMember is this proxy's embedded etcd member as the
// [discovery] keys describe it, defaults filled in.
type EmbeddedMember struct {
	// Name is the member's name ("galeon" for a single member).
	Name string
	// ClientListen and PeerListen are where it listens (host:port).
	ClientListen, PeerListen string
	// ClientURL and PeerURL are what it advertises: the URLs the other
	// members and every galeon process reach it at.
	ClientURL, PeerURL string
	// Peers is the initial cluster of members formed together (empty: a
	// single member, or one that joins).
	Peers []Peer
	// Join lists client URLs of running members to be added through
	// (empty: none).
	Join []string
}

// Clustered says whether the member is one of several (peers or join).
func (m EmbeddedMember) Clustered() bool { return len(m.Peers) > 0 || len(m.Join) > 0 }

// InitialCluster is etcd's --initial-cluster for Peers.
func (m EmbeddedMember) InitialCluster() string {
	parts := make([]string, len(m.Peers))
	for i, p := range m.Peers {
		parts[i] = p.Name + "=" + p.URL
	}
	return strings.Join(parts, ",")
}

// EmbeddedMember derives this proxy's etcd member from the keys and lists
// what is wrong with them, each message naming its key. Without peers
// and join it is today's single member: "galeon" on loopback.
func (c Discovery) EmbeddedMember() (EmbeddedMember, []string) {
	var out []string
	add := func(key, format string, a ...any) {
		out = append(out, "discovery."+key+": "+fmt.Sprintf(format, a...))
	}
	m := EmbeddedMember{Name: c.MemberName, ClientListen: c.ClientListen, PeerListen: c.PeerListen}
	if m.ClientListen == "" {
		m.ClientListen = "127.0.0.1:2379"
	}
	clustered := len(c.Peers) > 0 || c.Join != ""
	// A member others reach must advertise a reachable address; today's
	// single member (no member_name) keeps working as it always did.
	strict := clustered || c.MemberName != ""
	switch {
	case m.Name == "" && clustered:
		add("member_name", "required with discovery.peers or discovery.join: this member's name in the etcd cluster (its entry in peers)")
	case m.Name == "":
		// A single member, as galeon has always run it: other members
		// may still join it later (its client_url and peer_url then
		// say where they reach it).
		m.Name = "galeon"
	default:
		if err := ValidName("member", m.Name); err != nil {
			add("member_name", "%v", err)
		}
	}
	names, urls := map[string]bool{}, map[string]bool{}
	for _, p := range c.Peers {
		name, u, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			add("peers", "%q is not NAME=http://HOST:PORT (a member's name and its peer URL, as etcd's initial-cluster)", p)
			continue
		}
		pu, err := memberURL(u)
		if err != nil {
			add("peers", "%q: %v", p, err)
			continue
		}
		if err := ValidName("member", name); err != nil {
			add("peers", "%v", err)
		}
		if names[name] || urls[pu] {
			add("peers", "%q: every member needs its own name and its own peer URL", p)
		}
		names[name], urls[pu] = true, true
		m.Peers = append(m.Peers, Peer{Name: name, URL: pu})
	}
	if n := len(c.Peers); n > 0 {
		if n%2 == 0 || n > 7 {
			add("peers", "%d members: use 3 or 5 (7 at most). A cluster keeps working while a majority is up: 3 members survive the loss of 1, 5 of 2, and an even number survives no more losses than one member fewer", n)
		}
		if m.Name != "" && !names[m.Name] {
			add("member_name", "%q is not in discovery.peers: name this proxy's own entry", m.Name)
		}
	}
	for _, p := range m.Peers {
		if p.Name == m.Name {
			m.PeerURL = p.URL
		}
	}
	if c.PeerURL != "" {
		pu, err := memberURL(c.PeerURL)
		switch {
		case err != nil:
			add("peer_url", "%v", err)
		case m.PeerURL != "" && pu != m.PeerURL:
			add("peer_url", "%q differs from this member's entry in discovery.peers (%s): give one of them", c.PeerURL, m.PeerURL)
		default:
			m.PeerURL = pu
		}
	}
	if m.PeerListen == "" && m.PeerURL != "" {
		m.PeerListen = strings.TrimPrefix(m.PeerURL, "http://")
	}
	if m.PeerListen == "" {
		m.PeerListen = "127.0.0.1:2380"
	}
	if m.PeerURL == "" {
		m.PeerURL = "http://" + m.PeerListen
		if strict && unspecified(m.PeerListen) {
			add("peer_url", "required when peer_listen %q listens on every interface: the URL the other members reach this one at, e.g. http://10.0.0.4:2380", m.PeerListen)
		}
	}
	m.ClientURL = "http://" + m.ClientListen
	if c.ClientURL != "" {
		cu, err := memberURL(c.ClientURL)
		if err != nil {
			add("client_url", "%v", err)
		}
		m.ClientURL = cu
	} else if strict && unspecified(m.ClientListen) {
		add("client_url", "required when client_listen %q listens on every interface: the URL galeon processes on other machines reach this member at, e.g. http://10.0.0.4:2379", m.ClientListen)
	}
	if c.Join != "" {
		eps, secure, err := ParseEndpoints(c.Join)
		switch {
		case err != nil:
			add("join", "%v: give running members' client addresses", err)
		case secure:
			add("join", "the embedded etcd speaks no TLS: use etcd:// addresses")
		default:
			m.Join = eps
		}
	}
	return m, out
}

// memberURL checks an embedded member's URL: http://host:port (the
// embedded etcd has no TLS) with an address other machines can use.
func memberURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not a URL such as http://10.0.0.1:2380", s)
	}
	if u.Scheme != "http" {
		return "", fmt.Errorf("%q: the embedded etcd speaks plain http:// between members (for TLS, run an external etcd cluster)", s)
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return "", fmt.Errorf("%q: the host needs a port, e.g. http://%s:2380", s, u.Host)
	}
	if unspecified(u.Host) {
		return "", fmt.Errorf("%q: a wildcard address cannot be reached; give this machine's address", s)
	}
	return "http://" + u.Host, nil
}

// unspecified says whether host:port listens on every interface.
func unspecified(hostport string) bool {
	h, _, _ := net.SplitHostPort(hostport)
	ip := net.ParseIP(h)
	return h == "" || ip != nil && ip.IsUnspecified()
}
