package discovery

import (
	"errors"
	"testing"

	"github.com/galeon-db/galeon/internal/config"
)

func TestPlanStart(t *testing.T) {
	peers := []config.Peer{{Name: "p1", URL: "http://h1:2380"}, {Name: "p2", URL: "http://h2:2380"}, {Name: "p3", URL: "http://h3:2380"}}
	static := "p1=http://h1:2380,p2=http://h2:2380,p3=http://h3:2380"
	started := func(id uint64, name, peer string) remoteMember {
		return remoteMember{ID: id, Name: name, PeerURLs: []string{peer}, ClientURLs: []string{"http://c-" + name}}
	}
	unstarted := func(id uint64, name, peer string) remoteMember {
		return remoteMember{ID: id, Name: name, PeerURLs: []string{peer}}
	}
	running := []remoteMember{started(1, "p1", "http://h1:2380"), started(2, "p2", "http://h2:2380"), started(3, "p3", "http://h3:2380")}
	cases := []struct {
		name    string
		in      planInput
		want    startPlan
		wantErr error
	}{
		{name: "restart with data: etcd's WAL decides, whatever the others say",
			in:   planInput{Name: "p2", PeerURL: "http://h2:2380", Peers: peers, HasData: true},
			want: startPlan{State: "existing", InitialCluster: static}},
		{name: "first of three formed together: nobody answers yet",
			in:   planInput{Name: "p1", PeerURL: "http://h1:2380", Peers: peers},
			want: startPlan{State: "new", InitialCluster: static}},
		{name: "second of three at once: p1 answers with the initial cluster, nobody started",
			in: planInput{Name: "p2", PeerURL: "http://h2:2380", Peers: peers,
				Remote: []remoteMember{unstarted(1, "p1", "http://h1:2380"), unstarted(2, "p2", "http://h2:2380"), unstarted(3, "p3", "http://h3:2380")}},
			want: startPlan{State: "new", InitialCluster: static}},
		{name: "late third of a static formation: the others formed, it never started",
			in: planInput{Name: "p3", PeerURL: "http://h3:2380", Peers: peers,
				Remote: []remoteMember{started(1, "p1", "http://h1:2380"), started(2, "p2", "http://h2:2380"), unstarted(3, "p3", "http://h3:2380")}},
			want: startPlan{State: "existing", InitialCluster: static}},
		{name: "data directory lost: the cluster knows it as started",
			in:      planInput{Name: "p3", PeerURL: "http://h3:2380", Peers: peers, Remote: running},
			wantErr: errDataLost},
		{name: "data directory lost, with join set: still refused (it would vote afresh)",
			in:      planInput{Name: "p3", PeerURL: "http://h3:2380", Join: true, Remote: running},
			wantErr: errDataLost},
		{name: "replaced: added for its peer URL (member replace), started with existing",
			in: planInput{Name: "p4", PeerURL: "http://h4:2380", Peers: peers,
				Remote: []remoteMember{started(1, "p1", "http://h1:2380"), started(2, "p2", "http://h2:2380"), {ID: 9, PeerURLs: []string{"http://h4:2380"}, Learner: true}}},
			want: startPlan{State: "existing", InitialCluster: "p1=http://h1:2380,p2=http://h2:2380,p4=http://h4:2380"}},
		{name: "removed member without data and without join: refused",
			in: planInput{Name: "p3", PeerURL: "http://h3:2380", Peers: peers,
				Remote: []remoteMember{started(1, "p1", "http://h1:2380"), started(2, "p2", "http://h2:2380")}},
			wantErr: errNotMember},
		{name: "join: added as a learner",
			in:   planInput{Name: "p4", PeerURL: "http://h4:2380", Join: true, Remote: running},
			want: startPlan{State: "existing", AddAsLearner: true}},
		{name: "join while another joiner is pending: its entry gets a placeholder name",
			in: planInput{Name: "p5", PeerURL: "http://h5:2380", Join: true,
				Remote: append(append([]remoteMember{}, running...), remoteMember{ID: 0xab, PeerURLs: []string{"http://h5:2380"}, Learner: true})},
			want: startPlan{State: "existing", InitialCluster: "p1=http://h1:2380,p2=http://h2:2380,p3=http://h3:2380,p5=http://h5:2380"}},
		{name: "join: nobody answers",
			in:      planInput{Name: "p4", PeerURL: "http://h4:2380", Join: true},
			wantErr: errors.New("no member answers")},
		{name: "peers that disagree: answered, nobody started, this member not listed",
			in: planInput{Name: "p3", PeerURL: "http://h3:2380", Peers: peers,
				Remote: []remoteMember{unstarted(1, "p1", "http://h1:2380"), unstarted(2, "x", "http://hx:2380")}},
			wantErr: errNotMember},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := planStart(c.in)
			if c.wantErr != nil {
				if err == nil || !errors.Is(err, c.wantErr) && err.Error() != c.wantErr.Error() {
					t.Fatalf("err %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.State != c.want.State || got.InitialCluster != c.want.InitialCluster || got.AddAsLearner != c.want.AddAsLearner {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
	if got := initialCluster([]remoteMember{started(1, "p1", "http://h1:2380"), {ID: 0xab, PeerURLs: []string{"http://h9:2380"}, Learner: true}}, "p4", "http://h4:2380"); got != "p1=http://h1:2380,pending-ab=http://h9:2380,p4=http://h4:2380" {
		t.Errorf("initialCluster with another pending member: %s", got)
	}
}
