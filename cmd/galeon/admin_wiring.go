package main

import (
	"context"
	"log/slog"

	"github.com/galeon-db/galeon/internal/admin"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/metrics"
	"github.com/galeon-db/galeon/internal/proxy"
)

// startAdmin serves the admin SQL and HTTP endpoints for p until ctx ends.
// Listening happens here, so a taken port fails the start at once.
func startAdmin(ctx context.Context, cfg *config.Config, p *proxy.Proxy, log *slog.Logger, errs chan<- error) error {
	if cfg.Admin.Listen == "" && cfg.Admin.HTTPListen == "" {
		return nil
	}
	reg, err := metrics.NewRegistry(p.Collectors()...)
	if err != nil {
		return err
	}
	srv := admin.NewServer(admin.Config{
		SQLListen: cfg.Admin.Listen, HTTPListen: cfg.Admin.HTTPListen,
		User: cfg.Admin.User, Password: cfg.Admin.Password, Logger: log,
	}, p.AdminTables(), metrics.Handler(reg, log))
	if err := srv.Listen(); err != nil {
		return err
	}
	go func() { errs <- srv.Serve(ctx) }()
	return nil
}
