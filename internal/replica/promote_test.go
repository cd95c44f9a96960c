package replica

import (
	"testing"
	"time"
)

func TestDecidePromotion(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	pos := func(s string) Position {
		p, err := ParsePosition(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := PromoteInput{Me: "dr1", Promoted: "dr1", Domain: 100, Now: now, CatchUpUntil: now.Add(10 * time.Second)}
	for _, c := range []struct {
		name   string
		change func(*PromoteInput)
		want   PromoteAction
		lost   uint64
	}{
		{"another replica promoted", func(in *PromoteInput) { in.Promoted = "dr2" }, StandBy, 0},
		{"already writable", func(in *PromoteInput) {
			in.Writable = true
			in.SlavePos, in.ClusterPos = pos("100-1-5"), pos("100-1-7")
		}, Promoted, 2},
		{"caught up, the fence not held yet: waits", func(in *PromoteInput) {
			in.Replicating = true
			in.SlavePos, in.ClusterPos = pos("100-1-7"), pos("100-1-7")
		}, CatchUp, 0},
		{"caught up, the fence not held, time over", func(in *PromoteInput) {
			in.Replicating, in.Now = true, now.Add(time.Minute)
			in.SlavePos, in.ClusterPos = pos("100-1-7"), pos("100-1-7")
		}, Promote, 0},
		{"caught up", func(in *PromoteInput) {
			in.Replicating, in.FenceHeld = true, true
			in.SlavePos, in.ClusterPos = pos("100-1-7,1001-1001-3"), pos("100-1-7")
		}, Promote, 0},
		{"ahead of the published position", func(in *PromoteInput) { in.SlavePos, in.ClusterPos = pos("100-1-9"), pos("100-1-7") }, Promote, 0},
		{"short, replicating, in time: waits", func(in *PromoteInput) {
			in.Replicating, in.FenceHeld = true, true
			in.SlavePos, in.ClusterPos = pos("100-1-5"), pos("100-1-7")
		}, CatchUp, 2},
		{"short, replicating, time over", func(in *PromoteInput) {
			in.Replicating, in.Now = true, now.Add(11*time.Second)
			in.SlavePos, in.ClusterPos = pos("100-1-5"), pos("100-1-7")
		}, Promote, 2},
		{"short, the cluster gone", func(in *PromoteInput) { in.SlavePos, in.ClusterPos = pos("100-1-5"), pos("100-1-7") }, Promote, 2},
		{"planned, short, threads down a moment: waits", func(in *PromoteInput) {
			in.Planned, in.FenceHeld = true, true
			in.SlavePos, in.ClusterPos = pos("100-1-5"), pos("100-1-7")
		}, CatchUp, 2},
		{"planned, caught up, the fence not held: waits", func(in *PromoteInput) {
			in.Planned = true
			in.SlavePos, in.ClusterPos = pos("100-1-7"), pos("100-1-7")
		}, CatchUp, 0},
		{"other domains do not count", func(in *PromoteInput) { in.SlavePos, in.ClusterPos = pos("100-1-7"), pos("100-1-7,101-2-50") }, Promote, 0},
	} {
		in := base
		c.change(&in)
		d := PromoteStep(in)
		if d.Action != c.want || d.Lost != c.lost || d.Why == "" {
			t.Errorf("%s: %+v, want %s lost %d", c.name, d, c.want, c.lost)
		}
	}
}
