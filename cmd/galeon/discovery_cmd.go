package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

const discoveryUsage = `usage: galeon discovery member ACTION --discovery etcd://H:P[,H:P...] [flags]
       galeon discovery member list
       galeon discovery member add --peer-url http://HOST:2380
       galeon discovery member remove NAME
       galeon discovery member replace NAME --peer-url http://HOST:2380

  list      the etcd cluster's members: name, ID, peer and client URLs, learner, leader, health
  add       add a member for a proxy that will start with this peer URL (as a learner: it
            counts towards no quorum until it has started, caught up and been promoted)
  remove    remove a member for good (etcd refuses when the others would lose their quorum)
  replace   replace a lost member with ONE command: NAME is removed, then a member for
            --peer-url is added; start the new proxy with an empty discovery.data_dir and
            discovery.join = the running members' client URLs: it joins and is promoted
            once caught up

--discovery names running members' client URLs (the embedded etcd's discovery.client_url).
`

// runDiscovery manages the etcd cluster that holds the control plane:
// the members of an embedded etcd cluster of proxies (or of any etcd
// cluster), through etcd's own membership API.
func runDiscovery(ctx context.Context, args []string) error {
	if len(args) < 2 || args[0] != "member" || !slices.Contains([]string{"list", "add", "remove", "replace"}, args[1]) {
		fmt.Fprint(os.Stderr, discoveryUsage)
		return errors.New("an action is required: member list, add, remove or replace")
	}
	action := args[1]
	fs := flag.NewFlagSet("discovery member "+action, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, discoveryUsage); fs.PrintDefaults() }
	df := addDiscoveryFlags(fs)
	var peerURL *string
	if action == "add" || action == "replace" {
		peerURL = fs.String("peer-url", "", "the new member's peer URL, http://HOST:PORT (its discovery.peer_url)")
	}
	pos, err := parseInterleaved(fs, args[2:])
	if err != nil {
		return err
	}
	wantArgs := map[string]int{"list": 0, "add": 0, "remove": 1, "replace": 1}[action]
	if len(pos) != wantArgs {
		fmt.Fprint(os.Stderr, discoveryUsage)
		if wantArgs == 0 {
			return fmt.Errorf("member %s takes no argument (got %s)", action, strings.Join(pos, " "))
		}
		return fmt.Errorf("member %s needs the member's name (see `galeon discovery member list`)", action)
	}
	if peerURL != nil {
		if *peerURL == "" {
			return fmt.Errorf("member %s: --peer-url is required: the URL the new member's peers reach it at, e.g. http://10.0.0.4:2380", action)
		}
		if !strings.HasPrefix(*peerURL, "http://") || strings.Count(*peerURL, ":") != 2 {
			return fmt.Errorf("--peer-url %q: give http://HOST:PORT (the embedded etcd speaks plain http between members)", *peerURL)
		}
	}
	store, err := df.open(ctx, 5*time.Second)
	if err != nil {
		return err
	}
	defer store.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch action {
	case "list":
		ms, err := store.Members(ctx)
		if err != nil {
			return err
		}
		return printMembers(os.Stdout, ms)
	case "add":
		m, err := store.AddMember(ctx, *peerURL)
		if err != nil {
			return err
		}
		fmt.Printf("added member %x for %s as a learner; start its proxy with an empty discovery.data_dir, peer_url = %q and join = %q\n",
			m.ID, *peerURL, *peerURL, *df.endpoints)
	case "remove":
		m, err := store.RemoveMember(ctx, pos[0])
		if err != nil {
			return err
		}
		fmt.Printf("removed member %s (%x); if its proxy still runs, it stops serving etcd and must not be restarted with its old discovery.data_dir\n", pos[0], m.ID)
	case "replace":
		old, added, err := store.ReplaceMember(ctx, pos[0], *peerURL)
		if err != nil {
			return err
		}
		fmt.Printf("replaced member %s (%x) by a learner at %s (%x); now start the new proxy with an empty discovery.data_dir, peer_url = %q and join = %q: it joins and is promoted once caught up\n",
			pos[0], old.ID, *peerURL, added.ID, *peerURL, *df.endpoints)
	}
	return nil
}

func printMembers(w io.Writer, ms []discovery.Member) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tPEER URLS\tCLIENT URLS\tROLE\tSTATUS")
	for _, m := range ms {
		name, role, status := m.Name, "voter", "down"
		if name == "" {
			name = "(not started)"
		}
		if m.Learner {
			role = "learner"
		}
		if m.Leader {
			role += ", leader"
		}
		if m.Healthy {
			status = "healthy"
		} else if !m.Started() {
			status = "not started"
		}
		fmt.Fprintf(tw, "%s\t%x\t%s\t%s\t%s\t%s\n", name, m.ID, strings.Join(m.PeerURLs, ","), strings.Join(m.ClientURLs, ","), role, status)
	}
	return tw.Flush()
}
