package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/galeon-db/galeon/internal/netns"
)

// Defaults for a sandbox created without explicit options.
const (
	DefaultName     = "galeon"
	DefaultBasePort = 4400
	DefaultRoot     = "/var/tmp/galeon"
	DefaultNodes    = 3
	stateFile       = "sandbox.json"
)

// Port offsets from the base port. Node i (1-based) listens for clients on
// base+i, for Galera group traffic on base+100+i, receives IST on base+200+i
// and SST on base+300+i. Keeping each kind of port in its own hundred makes
// a sandbox's ports easy to read off `ss -ltn`; two sandboxes coexist when
// their ranges do not meet (e.g. base ports 4400 and 5400). Up checks every
// port before it starts anything.
const (
	offsetClient = 0
	offsetGalera = 100
	offsetIST    = 200
	offsetSST    = 300
	// MaxNodes bounds the node index so the port ranges never overlap.
	MaxNodes = 99
)

// Node is one member of a sandbox: its name, index and ports.
type Node struct {
	Index      int    `json:"index"`
	Name       string `json:"name"`
	Port       int    `json:"port"`
	GaleraPort int    `json:"galera_port"`
	ISTPort    int    `json:"ist_port"`
	SSTPort    int    `json:"sst_port"`
	// Multi-site sandboxes: the node's site, the address it listens on
	// there (its site namespace's), and its gmcast.segment.
	Site    string `json:"site,omitempty"`
	Host    string `json:"host,omitempty"`
	Segment int    `json:"segment,omitempty"`
	// Weight is pc.weight when a layout gives one other than Galera's 1.
	Weight *int `json:"weight,omitempty"`
	// Replica: an asynchronous MariaDB replica of the cluster (no
	// wsrep), not a Galera node; only its client port is used.
	Replica bool `json:"replica,omitempty"`
}

// Credentials are generated when the sandbox is created and stored, mode
// 0600, in sandbox.json. There are no fixed default passwords.
type Credentials struct {
	AdminUser       string `json:"admin_user"`
	AdminPassword   string `json:"admin_password"`
	AppUser         string `json:"app_user"`
	AppPassword     string `json:"app_password"`
	MonitorUser     string `json:"monitor_user"`
	MonitorPassword string `json:"monitor_password"`
	SSTUser         string `json:"sst_user"`
	SSTPassword     string `json:"sst_password"`
	// ReplUser may read the nodes' binary logs (REPLICATION SLAVE), for
	// the sandbox's asynchronous replicas.
	ReplUser     string `json:"repl_user,omitempty"`
	ReplPassword string `json:"repl_password,omitempty"`
}

// State is what sandbox.json holds.
type State struct {
	Name      string `json:"name"`
	Dir       string `json:"dir"`
	BasePort  int    `json:"base_port"`
	SSTMethod string `json:"sst_method"`
	// ProviderOptions override or extend the default wsrep_provider_options.
	ProviderOptions map[string]string `json:"provider_options,omitempty"`
	// ServerOptions override or extend the default [mariadbd] options.
	ServerOptions map[string]string `json:"server_options,omitempty"`
	// TLS: every node serves TLS with the certificate of TLSFiles.
	TLS bool `json:"tls,omitempty"`
	// Discovery is the etcd where the sandbox's agents register its
	// nodes ("" for none).
	Discovery   string      `json:"discovery,omitempty"`
	Nodes       []Node      `json:"nodes"`
	Credentials Credentials `json:"credentials"`
	// Net and Arbitrators: a multi-site sandbox's network namespaces
	// and garbd processes (see sites.go).
	Net         *netns.Net   `json:"net,omitempty"`
	Arbitrators []Arbitrator `json:"arbitrators,omitempty"`
	// WANRTT is the round trip between sites the sandbox was made with
	// ("0s": none); `galeon sandbox latency` changes it at runtime.
	WANRTT string `json:"wan_rtt,omitempty"`
	// ReplicationSource: the nodes keep binary logs with the cluster's
	// GTIDs (wsrep_gtid_mode), so that asynchronous replicas can follow
	// whichever node is the writer. Replicas are those replicas.
	ReplicationSource bool   `json:"replication_source,omitempty"`
	Replicas          []Node `json:"replicas,omitempty"`
	// DROf names the sandbox this one is a DR cluster of: a Galera
	// cluster that replicates the other one asynchronously (its agent,
	// galeon agent --replica NAME on this sandbox, keeps one node
	// replicating from the other's writer), read-only for clients until
	// it is promoted. It
	// numbers its own transactions apart: GTIDDomain and ServerID.
	DROf       string `json:"dr_of,omitempty"`
	DRPromoted bool   `json:"dr_promoted,omitempty"`
	GTIDDomain uint32 `json:"gtid_domain,omitempty"`
	ServerID   uint32 `json:"server_id,omitempty"`
	// IDSlots is the highest AUTO_INCREMENT increment the nodes were
	// given (idSeries): removing a node never narrows it, so that the
	// nodes' series never meet.
	IDSlots int `json:"id_slots,omitempty"`
}

func newNode(basePort, index int) Node {
	return Node{
		Index:      index,
		Name:       "node" + strconv.Itoa(index),
		Port:       basePort + offsetClient + index,
		GaleraPort: basePort + offsetGalera + index,
		ISTPort:    basePort + offsetIST + index,
		SSTPort:    basePort + offsetSST + index,
	}
}

// Ports lists a node's ports with what each is for, for error messages.
func (n Node) Ports() []NamedPort {
	return []NamedPort{
		{n.Port, n.Name + " client"},
		{n.GaleraPort, n.Name + " galera"},
		{n.ISTPort, n.Name + " IST"},
		{n.SSTPort, n.Name + " SST"},
	}
}

// NamedPort is a port and the purpose it serves in the sandbox.
type NamedPort struct {
	Port int
	What string
}

// Addr is the node's client address: on loopback, or on its site's
// address in a multi-site sandbox (reachable from the host).
func (n Node) Addr() string { return n.host() + ":" + strconv.Itoa(n.Port) }

func (s *State) nodeDir(n Node) string   { return filepath.Join(s.Dir, n.Name) }
func (s *State) dataDir(n Node) string   { return filepath.Join(s.Dir, n.Name, "data") }
func (s *State) cnfPath(n Node) string   { return filepath.Join(s.Dir, n.Name, "my.cnf") }
func (s *State) errLog(n Node) string    { return filepath.Join(s.Dir, n.Name, "error.log") }
func (s *State) pidPath(n Node) string   { return filepath.Join(s.Dir, n.Name, "mariadbd.pid") }
func (s *State) socket(n Node) string    { return filepath.Join(s.Dir, n.Name, "mariadbd.sock") }
func (s *State) stdoutLog(n Node) string { return filepath.Join(s.Dir, n.Name, "stdout.log") }
func (s *State) grastate(n Node) string  { return filepath.Join(s.dataDir(n), "grastate.dat") }

// Member returns the node or the asynchronous replica called name: what
// connections and kills take; node commands take only nodes (Node).
func (s *State) Member(name string) (Node, error) {
	for _, r := range s.Replicas {
		if r.Name == name {
			return r, nil
		}
	}
	return s.Node(name)
}

// Node returns the node with the given name ("node2") or index ("2").
func (s *State) Node(name string) (Node, error) {
	for _, n := range s.Nodes {
		if n.Name == name || strconv.Itoa(n.Index) == name {
			return n, nil
		}
	}
	names := make([]string, 0, len(s.Nodes))
	for _, n := range s.Nodes {
		names = append(names, n.Name)
	}
	var arbs []string
	for _, a := range s.Arbitrators {
		arbs = append(arbs, a.Name)
	}
	if _, ok := s.arbitrator(name); ok {
		return Node{}, fmt.Errorf("%s is an arbitrator (garbd): it holds no data, so this does not apply to it", name)
	}
	also := ""
	if len(arbs) > 0 {
		also = "; arbitrators: " + strings.Join(arbs, ", ")
	}
	return Node{}, fmt.Errorf("sandbox %q has no node %q (nodes: %s%s)", s.Name, name, strings.Join(names, ", "), also)
}

func (s *State) save() error {
	sort.Slice(s.Nodes, func(i, j int) bool { return s.Nodes[i].Index < s.Nodes[j].Index })
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.Dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.Dir, stateFile))
}

// ErrNoSandbox is returned by Open when the directory holds no sandbox.
var ErrNoSandbox = errors.New("no sandbox")

func loadState(dir string) (*State, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s: create one with `galeon sandbox up`", ErrNoSandbox, dir)
	}
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, stateFile), err)
	}
	s.Dir = dir
	return &s, nil
}

// DirFor is the default directory of the sandbox called name.
func DirFor(name string) string { return filepath.Join(DefaultRoot, name) }

// BackupArgs are mariabackup's arguments to copy node name (its my.cnf
// first, its socket, root by unix_socket) and its data directory.
func (s *State) BackupArgs(name string) ([]string, string, error) {
	for _, n := range s.Nodes {
		if n.Name == name {
			return []string{"--defaults-file=" + s.cnfPath(n), "--socket=" + s.socket(n), "--user=root"}, s.dataDir(n), nil
		}
	}
	return nil, "", fmt.Errorf("no node %q in sandbox %s", name, s.Name)
}
