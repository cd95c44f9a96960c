package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/assemble"
	"github.com/galeon-db/galeon/internal/config"
)

const proxyUsage = `usage: galeon proxy [--config FILE] [--check-config] [--background --pid-file F --log-file F] [--verbose]
       galeon proxy stop --pid-file F
       galeon proxy drain NODE [--undo] [--config FILE]     no new transactions on NODE; in-flight ones finish
       galeon proxy switchover [--to NODE] [--config FILE]  move the writer role gracefully
       galeon proxy events [--limit N] [--config FILE]      recent routing events, newest first
`

func runProxy(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "stop" {
		fs := flag.NewFlagSet("proxy stop", flag.ContinueOnError)
		pidFile := fs.String("pid-file", "galeon-proxy.pid", "PID file written by --background")
		if _, err := parseInterleaved(fs, args[1:]); err != nil {
			return err
		}
		return stopBackground(ctx, *pidFile)
	}
	if len(args) > 0 && (args[0] == "drain" || args[0] == "switchover" || args[0] == "events") {
		return runProxyControl(ctx, args[0], args[1:])
	}
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, proxyUsage); fs.PrintDefaults() }
	path := fs.String("config", "galeon.toml", "configuration file (TOML)")
	check := fs.Bool("check-config", false, "validate the configuration and exit")
	verbose := fs.Bool("verbose", false, "debug logging")
	logFormat := fs.String("log-format", "text", "log lines as text (logfmt) or json")
	background := fs.Bool("background", false, "run detached; returns once the proxy listens")
	pidFile := fs.String("pid-file", "", "with --background: where to record the PID (default: beside the config)")
	logFile := fs.String("log-file", "", "with --background: log file (default: beside the config)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file until the proxy stops")
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
	user, password, from, err := adminCredentials(cfg, *path)
	if err != nil {
		return err
	}
	if *background {
		dir := filepath.Dir(*path)
		if *pidFile == "" {
			*pidFile = filepath.Join(dir, "galeon-proxy.pid")
		}
		if *logFile == "" {
			*logFile = filepath.Join(dir, "galeon-proxy.log")
		}
		child := []string{"proxy", "--config", *path}
		if *verbose {
			child = append(child, "--verbose")
		}
		pid, err := startBackground(child, cfg.Proxy.Listen, *pidFile, *logFile)
		if err != nil {
			return err
		}
		fmt.Printf("galeon proxy running (pid %d, log %s)\n", pid, *logFile)
		printProxyInfo(cfg, user, from, *path)
		fmt.Printf("stop it: galeon proxy stop --pid-file %s\n", *pidFile)
		return nil
	}
	cfg.Admin.User, cfg.Admin.Password = user, password
	if os.Getenv("GOMAXPROCS") == "" {
		threads := cfg.Proxy.Threads
		if threads == 0 {
			threads = max(1, runtime.NumCPU()/2)
		}
		runtime.GOMAXPROCS(threads)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log, err := newLogger(*logFormat, level)
	if err != nil {
		return err
	}
	a, err := assemble.Start(ctx, assemble.Options{Config: cfg, ConfigPath: *path, Log: log, Admin: true})
	if err != nil {
		return err
	}
	// A SIGTERM ends the process within shutdownDeadline: the
	// embedded etcd would otherwise wait 7 s for the streams other
	// proxies and agents keep open.
	defer a.StopWithin(shutdownDeadline)
	log.Info("galeon proxy listening", "mysql", a.Addr, "admin", cfg.Admin.Listen, "http", cfg.Admin.HTTPListen, "servers", len(cfg.Servers))
	// The password itself is never logged nor printed: it is in the
	// configuration or in the credentials file (mode 0600).
	switch from {
	case credGenerated:
		log.Info("admin password generated", "user", user, "stored_in", credentialsPath(*path), "mode", "0600")
	case credStored:
		log.Info("admin password read", "user", user, "from", credentialsPath(*path))
	}
	return a.Wait(ctx)
}

// shutdownDeadline bounds a proxy's stop: leaving the control plane,
// closing client connections and stopping the embedded etcd.
const shutdownDeadline = 2 * time.Second

// printProxyInfo tells how to reach a proxy started in the background,
// and where its admin password is: never the password itself (terminal
// scrollback and CI logs keep what is printed).
func printProxyInfo(cfg *config.Config, user string, from credSource, path string) {
	fmt.Printf("  MySQL:  %s   (mariadb -h%s -P%s -u%s -p...)\n", cfg.Proxy.Listen, hostOf(cfg.Proxy.Listen), portOf(cfg.Proxy.Listen), cfg.Users[0].Name)
	if cfg.Admin.Listen != "" {
		fmt.Printf("  admin:  %s   mariadb -h%s -P%s -u%s -p\n", cfg.Admin.Listen, hostOf(cfg.Admin.Listen), portOf(cfg.Admin.Listen), user)
	}
	if cfg.Admin.HTTPListen != "" {
		fmt.Printf("  web:    http://%s/  (dashboard; log in as %s)\n", cfg.Admin.HTTPListen, user)
		fmt.Printf("  HTTP:   http://%s/metrics  http://%s/api/tables (basic auth %s)\n", cfg.Admin.HTTPListen, cfg.Admin.HTTPListen, user)
	}
	switch from {
	case credGenerated:
		fmt.Printf("  admin password: generated and stored in %s (mode 0600, as %s:PASSWORD)\n", credentialsPath(path), user)
	case credStored:
		fmt.Printf("  admin password: in %s (mode 0600, as %s:PASSWORD)\n", credentialsPath(path), user)
	default:
		fmt.Printf("  admin password: admin.password in %s\n", path)
	}
}

func hostOf(a string) string { return a[:max(0, strings.LastIndexByte(a, ':'))] }
func portOf(a string) string { return a[strings.LastIndexByte(a, ':')+1:] }

// credentialsPath is where a generated admin password is kept: beside the
// configuration, so restarts keep it.
func credentialsPath(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), "galeon-admin.credentials")
}

// credSource says where the admin password came from.
type credSource int

const (
	credConfigured credSource = iota // admin.password in the configuration
	credGenerated                    // generated now, stored in the credentials file
	credStored                       // read from the credentials file of an earlier start
)

// adminCredentials returns the configured admin account, or one generated
// on first start and stored (0600) for later starts. There is never a
// fixed default password.
func adminCredentials(cfg *config.Config, configPath string) (user, password string, from credSource, err error) {
	if cfg.Admin.Password != "" {
		return cfg.Admin.User, cfg.Admin.Password, credConfigured, nil
	}
	p := credentialsPath(configPath)
	if b, err := os.ReadFile(p); err == nil {
		if u, pw, ok := strings.Cut(strings.TrimSpace(string(b)), ":"); ok && u == cfg.Admin.User && pw != "" {
			return u, pw, credStored, nil
		}
	}
	raw := make([]byte, 18)
	if _, err := rand.Read(raw); err != nil {
		return "", "", 0, err
	}
	password = base64.RawURLEncoding.EncodeToString(raw)
	if err := os.WriteFile(p, []byte(cfg.Admin.User+":"+password+"\n"), 0o600); err != nil {
		return "", "", 0, fmt.Errorf("store generated admin password in %s: %w", p, err)
	}
	return cfg.Admin.User, password, credGenerated, nil
}
