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
	} else if _, _, err := ParseEndpoints(c.Endpoints); err != nil {
		add("endpoints", "%v", err)
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
