package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/config"
)

// runProxyControl drives a running proxy through its admin interface:
// drain NODE, switchover [--to NODE] and events.
func runProxyControl(ctx context.Context, action string, args []string) error {
	fs := flag.NewFlagSet("proxy "+action, flag.ContinueOnError)
	path := fs.String("config", "galeon.toml", "the running proxy's configuration (for its admin address and credentials)")
	undo := fs.Bool("undo", false, "drain: make the node active again")
	to := fs.String("to", "", "switchover: the node to move the writer role to (default: the next by writer weight)")
	limit := fs.Int("limit", 20, "events: how many of the newest events to show")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	user, password, _, err := adminCredentials(cfg, *path)
	if err != nil {
		return err
	}
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr, mc.InterpolateParams = user, password, "tcp", cfg.Admin.Listen, true
	mc.Timeout = 2 * time.Second
	db, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	switch action {
	case "events":
		rows, err := db.QueryContext(ctx, "SELECT time, kind, node, detail FROM events ORDER BY id DESC LIMIT ?", *limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var at, kind, node, detail string
			if err := rows.Scan(&at, &kind, &node, &detail); err != nil {
				return err
			}
			fmt.Printf("%-30s %-13s %-8s %s\n", at, kind, node, detail)
		}
		return rows.Err()
	case "drain":
		if len(pos) != 1 {
			return errors.New("drain needs exactly one NODE")
		}
		state := "drain"
		if *undo {
			state = "active"
		}
		res, err := db.ExecContext(ctx, "UPDATE servers SET admin_state = ? WHERE name = ?", state, pos[0])
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("no server named %q", pos[0])
		}
		fmt.Printf("%s: admin_state = %s\n", pos[0], state)
		return nil
	default: // switchover
		var before string
		var epoch int64
		if err := db.QueryRowContext(ctx, "SELECT node, epoch FROM writer").Scan(&before, &epoch); err != nil {
			return err
		}
		target := *to
		if target == "" {
			err = db.QueryRowContext(ctx, "SELECT name FROM servers WHERE status = 'ONLINE' AND writer_weight > 0 AND name != ? ORDER BY writer_weight DESC, name LIMIT 1", before).Scan(&target)
			if err != nil {
				return fmt.Errorf("no other ONLINE node with writer_weight > 0 to switch to: %w", err)
			}
		}
		start := time.Now()
		if _, err := db.ExecContext(ctx, "UPDATE writer SET node = ?", target); err != nil {
			return err
		}
		for time.Since(start) < cfg.Galera.DrainGrace.D()+5*time.Second {
			var node string
			var e int64
			if err := db.QueryRowContext(ctx, "SELECT node, epoch FROM writer").Scan(&node, &e); err == nil && node == target && e > epoch {
				fmt.Printf("writer moved from %s to %s (epoch %d -> %d) in %s\n", before, target, epoch, e, time.Since(start).Round(time.Millisecond))
				return nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		return fmt.Errorf("the writer did not move to %s within drain_grace", target)
	}
}
