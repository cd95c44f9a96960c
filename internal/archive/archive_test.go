package archive

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStartFile(t *testing.T) {
	src := []File{{"binlog.000003", 10}, {"binlog.000004", 20}}
	for _, c := range []struct {
		name     string
		archived []File
		source   []File
		want     string
		err      string
	}{
		{"empty archive starts at the source's first log", nil, src, "binlog.000003", ""},
		{"goes on with the archive's last file", []File{{"binlog.000003", 10}, {"binlog.000004", 5}}, src, "binlog.000004", ""},
		{"a purged last file is a gap", []File{{"binlog.000001", 10}}, src, "", "no longer has"},
		{"no binary log", nil, nil, "", "log_bin is off"},
	} {
		got, err := StartFile(c.archived, c.source)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %q %v, want %q %q", c.name, got, err, c.want, c.err)
		}
	}
}

func TestBehind(t *testing.T) {
	src := []File{{"binlog.000001", 100}, {"binlog.000002", 50}}
	for _, c := range []struct {
		archived []File
		want     int64
	}{
		{[]File{{"binlog.000001", 100}, {"binlog.000002", 50}}, 0},
		{[]File{{"binlog.000001", 100}, {"binlog.000002", 20}}, 30},
		{[]File{{"binlog.000001", 60}}, 90},
		{nil, 150},
		// The archive holds more than the source still lists (purged).
		{[]File{{"binlog.000000", 80}, {"binlog.000001", 100}, {"binlog.000002", 50}}, 0},
	} {
		if got := Behind(c.archived, src); got != c.want {
			t.Errorf("Behind(%v) = %d, want %d", c.archived, got, c.want)
		}
	}
}

func TestLagAndRemember(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	var s []Sample
	for i := range 5 {
		s = Remember(s, Sample{At: t0.Add(time.Duration(i) * time.Second), Pos: Position{"binlog.000001", int64(100 * (i + 1))}}, time.Time{}, Position{})
	}
	now := t0.Add(5 * time.Second)
	// Samples at t0+0..4s at offsets 100..500; now is t0+5s. The writes
	// the archive lacks came after the last sample it reached.
	for _, c := range []struct {
		at   Position
		want time.Duration
	}{
		{Position{"binlog.000001", 500}, 0},               // has every sample's position
		{Position{"binlog.000002", 4}, 0},                 // a later file
		{Position{"binlog.000001", 450}, 2 * time.Second}, // reached t0+3s's, not t0+4s's
		{Position{"binlog.000001", 300}, 3 * time.Second}, // exactly at t0+2s's
		{Position{"binlog.000001", 299}, 4 * time.Second}, // just short of it
		{Position{"binlog.000001", 100}, 5 * time.Second}, // at the first only: since it
		{Position{"binlog.000001", 50}, 5 * time.Second},  // short of all: at least since the first
		{Position{"binlog.000000", 9999}, 5 * time.Second},
		{Position{"", 0}, 5 * time.Second}, // an empty archive
	} {
		if got := Lag(s, c.at, now); got != c.want {
			t.Errorf("Lag at %v = %s, want %s", c.at, got, c.want)
		}
	}
	// Old samples the archive passed go, but the newest of them stays.
	reached := Remember(slices.Clone(s), Sample{At: t0.Add(10 * time.Second), Pos: Position{"binlog.000001", 600}}, t0.Add(3500*time.Millisecond), Position{"binlog.000001", 600})
	if len(reached) != 3 || !reached[0].At.Equal(t0.Add(3*time.Second)) {
		t.Errorf("Remember kept %v", reached)
	}
	// Samples an archive stuck at 150 has not reached stay, however old:
	// its lag keeps growing.
	stuck := Remember(slices.Clone(s), Sample{At: t0.Add(time.Hour), Pos: Position{"binlog.000001", 600}}, t0.Add(59*time.Minute), Position{"binlog.000001", 150})
	if got := Lag(stuck, Position{"binlog.000001", 150}, t0.Add(time.Hour)); got != time.Hour {
		t.Errorf("a stuck archive's lag after an hour: %s (kept %v)", got, stuck)
	}
}

func TestParseUntil(t *testing.T) {
	u, err := ParseUntil("2026-11-27 10:00:01", "")
	if err != nil || !u.Time.Equal(time.Date(2026, 11, 27, 10, 0, 1, 0, time.UTC)) || u.GTID != "" {
		t.Errorf("a UTC time: %+v %v", u, err)
	}
	u, err = ParseUntil("2026-11-27T12:00:01+02:00", "")
	if err != nil || !u.Time.Equal(time.Date(2026, 11, 27, 10, 0, 1, 0, time.UTC)) {
		t.Errorf("RFC 3339: %+v %v", u, err)
	}
	if u, err := ParseUntil("", "100-1-42"); err != nil || u.GTID != "100-1-42" {
		t.Errorf("a GTID: %+v %v", u, err)
	}
	for _, bad := range [][2]string{{"yesterday", ""}, {"", "100-1"}, {"", "a-b-c"}, {"2026-11-27 10:00:00", "100-1-2"}} {
		if _, err := ParseUntil(bad[0], bad[1]); err == nil {
			t.Errorf("ParseUntil(%q, %q) accepted", bad[0], bad[1])
		}
	}
}

func TestReplayArgs(t *testing.T) {
	files := []string{"/a/binlog.000001", "/a/binlog.000002"}
	got, err := ReplayArgs(files, "100-1-39", 100, Until{Time: time.Date(2026, 11, 27, 10, 0, 1, 500, time.UTC)})
	want := []string{"--do-domain-ids=100", "--start-position=100-1-39", "--stop-datetime=2026-11-27 10:00:01", "/a/binlog.000001", "/a/binlog.000002"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("until a time: %v %v, want %v", got, err, want)
	}
	got, err = ReplayArgs(files, "", 100, Until{GTID: "100-1-50"})
	want = []string{"--do-domain-ids=100", "--stop-position=100-1-50", "/a/binlog.000001", "/a/binlog.000002"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("from the beginning, until a GTID: %v %v, want %v", got, err, want)
	}
	if _, err := ReplayArgs(nil, "100-1-39", 100, Until{}); err == nil {
		t.Error("an empty archive was accepted")
	}
	if _, err := ReplayArgs(files, "binlog.000004 379", 100, Until{}); err == nil {
		t.Error("a file position was taken for a GTID")
	}
}

func TestDomains(t *testing.T) {
	if g := InDomain("0-1-5,100-1-39,101-2-3", 100); g != "100-1-39" {
		t.Errorf("InDomain = %q", g)
	}
	if g := InDomain("1000-1-5", 100); g != "" {
		t.Errorf("InDomain matched another domain's prefix: %q", g)
	}
	for _, c := range []struct {
		begins, first, from string
		ok                  bool
	}{
		{"", "100-1-1", "100-1-39", true},          // the archive has the domain from its start
		{"100-1-30", "100-1-31", "100-1-39", true}, // begins before the backup
		{"100-1-39", "100-1-40", "100-1-39", true}, // exactly at it
		{"100-1-40", "100-1-41", "100-1-39", false},
		{"100-1-40,101-2-9", "", "", false},              // a backup with nothing in the domain
		{"101-2-9", "100-1-2", "100-1-39,101-2-1", true}, // other domains do not count
		// A replica seeded from a backup begins with an empty state: its
		// first transaction says where it starts.
		{"", "100-1-40", "100-1-39", true},
		{"", "100-1-41", "100-1-39", false},
		{"", "", "100-1-39", true}, // nothing archived yet
	} {
		if err := CheckStart(c.begins, c.first, c.from, 100); (err == nil) != c.ok {
			t.Errorf("CheckStart(%q, %q, %q) = %v, want ok %v", c.begins, c.first, c.from, err, c.ok)
		}
	}
	d := uint32(100)
	for _, c := range []struct {
		from, until string
		rec         *uint32
		want        uint32
		ok          bool
	}{
		{"100-1-39", "", nil, 100, true},
		{"0-1-5,100-1-39", "", nil, 0, false},
		{"0-1-5,100-1-39", "", &d, 100, true},
		{"0-1-5,100-1-39", "100-1-50", nil, 100, true},
		{"100-1-39", "7-1-50", &d, 0, false},
	} {
		got, err := ClusterDomain(c.from, c.until, c.rec)
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("ClusterDomain(%q, %q) = %d %v, want %d ok %v", c.from, c.until, got, err, c.want, c.ok)
		}
	}
}

func TestParseLines(t *testing.T) {
	ev, ok := ParseEvent("#261127  9:44:25 server id 1  end_log_pos 7664 CRC32 0xb5d1bab6 \tGTID 100-1-40 trans\n")
	if !ok || ev.GTID != "100-1-40" || !ev.At.Equal(time.Date(2026, 11, 27, 9, 44, 25, 0, time.UTC)) {
		t.Errorf("ParseEvent = %+v %v", ev, ok)
	}
	for _, l := range []string{"BINLOG '\n", "#261127  9:44:25 server id 1  end_log_pos 7664 CRC32 0xb5d1bab6 \tQuery\tthread_id=5\n", "/*M!100001 SET @@session.gtid_seq_no=40*//*!*/;\n"} {
		if _, ok := ParseEvent(l); ok {
			t.Errorf("ParseEvent took %q", l)
		}
	}
	if l, ok := ParseGTIDList("#261127  9:44:01 server id 1001  end_log_pos 285 CRC32 0x97d4c2c8 \tGtid list [100-1-36,1001-1001-2]"); !ok || l != "100-1-36,1001-1001-2" {
		t.Errorf("ParseGTIDList = %q %v", l, ok)
	}
	if l, ok := ParseGTIDList("#261127  9:44:01 server id 1001  end_log_pos 285 CRC32 0x97d4c2c8 \tGtid list []"); !ok || l != "" {
		t.Errorf("an empty list = %q %v", l, ok)
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"binlog.000002", "binlog.000001", "binlog.index", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := Files(dir)
	if err != nil || len(fs) != 2 || fs[0].Name != "binlog.000001" || fs[1].Name != "binlog.000002" || fs[0].Size != 13 {
		t.Errorf("Files = %v %v", fs, err)
	}
}
