package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/proxy"
)

func runProxy(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	path := fs.String("config", "galeon.toml", "configuration file (TOML)")
	check := fs.Bool("check-config", false, "validate the configuration and exit")
	verbose := fs.Bool("verbose", false, "debug logging")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	if *check {
		fmt.Printf("%s: configuration is valid (%d servers, %d users, %d query rules)\n", *path, len(cfg.Servers), len(cfg.Users), len(cfg.QueryRules))
		return nil
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	p, err := proxy.New(cfg, log)
	if err != nil {
		return err
	}
	errs := make(chan error, 2)
	go func() { errs <- p.Serve(ctx) }()
	if err := startAdmin(ctx, cfg, p, log, errs); err != nil {
		return err
	}
	log.Info("galeon proxy listening", "mysql", cfg.Proxy.Listen, "servers", len(cfg.Servers))
	err = <-errs
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
