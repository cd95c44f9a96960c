package main

import (
	"context"
	"log/slog"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/proxy"
)

// startAdmin starts the admin endpoints (wired once internal/admin lands).
func startAdmin(ctx context.Context, cfg *config.Config, p *proxy.Proxy, log *slog.Logger, errs chan<- error) error {
	return nil
}
