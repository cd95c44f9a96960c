#!/usr/bin/env bash
# Installs what galeon needs on a Debian 12 machine, and only what is
# missing, so it is cheap to run before every `make up` / `make test`.
set -euo pipefail

PACKAGES=(
  mariadb-server mariadb-client galera-4 galera-arbitrator-4 mariadb-backup
  rsync socat lsof sysbench haproxy etcd-server keepalived iproute2 iptables procps
  python3-pymysql ca-certificates mariadb-test
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm fetches the web dashboard's chart library at build time. Any npm
# will do: a machine may have Node.js from elsewhere, whose npm Debian's
# package would conflict with.
command -v npm >/dev/null || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages: ${missing[*]}; run as root (or: sudo apt-get install -y ${missing[*]})" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Debian's postinst would start a system mariadb/etcd/haproxy; galeon runs
  # its own instances, so keep the package services from starting.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Go: any Go >= 1.21 can build galeon; it fetches the toolchain go.mod asks
# for from the Go module proxy (GOTOOLCHAIN=auto).
if ! command -v go >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: Go is missing; run as root or install Go >= 1.21" >&2
    exit 1
  fi
  echo "install-deps: installing Go from Debian backports"
  grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/ ||
    echo "deb http://deb.debian.org/debian bookworm-backports main" > /etc/apt/sources.list.d/backports.list
  apt-get update -qq
  apt-get install -y -qq -t bookworm-backports golang-go >/dev/null
fi

# staticcheck, pinned (2025.1.1 is module version v0.6.1).
GOBIN_DIR="$(go env GOPATH)/bin"
if [ ! -x "$GOBIN_DIR/staticcheck" ]; then
  echo "install-deps: installing staticcheck v0.6.1"
  GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@v0.6.1
fi

# promtool, which checks the shipped alert rules and the /metrics page in
# the tests: taken from Debian's prometheus package, unpacked into .cache/
# (git-ignored) rather than installed, so no Prometheus server is set up.
PROMTOOL="$(dirname "$0")/../.cache/bin/promtool"
if [ ! -x "$PROMTOOL" ]; then
  echo "install-deps: unpacking promtool from Debian's prometheus package into .cache/bin"
  tmp=$(mktemp -d)
  (cd "$tmp" && { apt-get download -qq prometheus 2>/dev/null || { apt-get update -qq && apt-get download -qq prometheus 2>/dev/null; }; } && dpkg-deb -x prometheus_*.deb x)
  mkdir -p "$(dirname "$PROMTOOL")"
  install -m 0755 "$tmp/x/usr/bin/promtool" "$PROMTOOL"
  rm -rf "$tmp"
fi
