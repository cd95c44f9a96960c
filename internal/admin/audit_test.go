package admin

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestRedactLiterals(t *testing.T) {
	got := redactLiterals("UPDATE users SET password = 'it''s', max = 10 WHERE name = \"app\" -- note")
	if want := "UPDATE users SET password = ?, max = ? WHERE name = ? -- note"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestMentionsSensitive(t *testing.T) {
	users := Table{Name: "users", Columns: []Column{{Name: "name", Kind: Text}, {Name: "password", Kind: Text, Sensitive: true}},
		Rows: func() [][]any { return nil }}
	fs := newFakeServers()
	cat, err := newCatalog([]Table{users, fs.table()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sql  string
		want bool
	}{
		{"UPDATE users SET password = 'x' WHERE name = 'a'", true},
		{"UPDATE `USERS` SET name = 'b' WHERE name = 'a'", true},
		{"INSERT INTO users VALUES ('a', 'x')", true},
		{"DELETE FROM users", true},
		{"UPDATE servers SET comment = (SELECT password FROM main.users)", true},
		{"UPDATE servers SET weight = 1", false},
		{"DELETE FROM servers WHERE comment = 'users'", false},
	} {
		stmts, err := splitQuery(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		if got := mentionsSensitive(cat, stmts[0]); got != tc.want {
			t.Errorf("%s: %v", tc.sql, got)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAuditLog(t *testing.T) {
	var logs syncBuffer
	var stored []string
	users := Table{
		Name:    "users",
		Columns: []Column{{Name: "name", Kind: Text}, {Name: "password", Kind: Text, Sensitive: true}},
		Rows:    func() [][]any { return [][]any{{"app", "(hash)"}} },
		Accepts: OpUpdate,
		Apply: func(changes []Change) error {
			for _, ch := range changes {
				stored = append(stored, ch.New[1].(string))
			}
			return nil
		},
	}
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{users, fs.table()}, nil, func(s *Server) {
		s.log = slog.New(slog.NewTextHandler(&logs, nil))
	})
	db := openDB(t, s, testUser, testPassword, "interpolateParams=true")
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "UPDATE users SET password = ? WHERE name = 'app'", "hunter2"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE users SET passwd = 'hunter3'"); err == nil {
		t.Fatal("unknown column accepted")
	}
	if _, err := db.ExecContext(ctx, "UPDATE servers SET status = 'OFFLINE_SOFT' WHERE hostname = 'db1'"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE servers SET status = 'NOPE'"); err == nil {
		t.Fatal("bad status accepted")
	}
	out := logs.String()
	if len(stored) != 1 || stored[0] != "hunter2" {
		t.Errorf("stored %v", stored)
	}
	for _, want := range []string{
		`msg="admin change" conn=1 remote=127.0.0.1:`,
		`user=admin query="UPDATE users SET password = ? WHERE name = ?" rows=1`,
		`msg="admin change refused"`,
		`query="UPDATE users SET passwd = ?" err="error 1054"`,
		`query="UPDATE servers SET status = 'OFFLINE_SOFT' WHERE hostname = 'db1'" rows=1`,
		`query="UPDATE servers SET status = 'NOPE'" err="ERROR 1105 (HY000): status must be`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hunter") {
		t.Errorf("password in log:\n%s", out)
	}
}
