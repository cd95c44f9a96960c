#!/usr/bin/env bash
# Installs what the driver matrix (test/drivers) needs, and only what is
# missing: PHP with mysqli/PDO (Debian packages), the Java drivers (Maven,
# compiled with javac), a Python venv with the Python drivers, and mysql2
# (npm ci); also Chromium, the browser the dashboard test drives. Downloads are cached in .cache/ (git-ignored), so a second run
# does nothing and takes about a second. Debian 12, as root.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=$ROOT/.cache
CLIENTS=test/drivers/clients
say() { echo "install-drivers: $*"; }
sha() { sha256sum "$1" | cut -c1-64; }

# --- Debian packages -------------------------------------------------------
missing=()
for p in php-cli php-mysql; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v javac >/dev/null || missing+=(default-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
# Debian's Chromium, headless, loads the web dashboard in test/proxy.
command -v chromium >/dev/null || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    say "missing packages: ${missing[*]}; run as root (or: sudo apt-get install -y ${missing[*]})" >&2
    exit 1
  fi
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
mkdir -p "$CACHE"

# --- Java: MySQL Connector/J and MariaDB Connector/J -------------------------
POM=$CLIENTS/java/pom.xml
if [ "$(cat "$CACHE/java-lib/.pom.sha256" 2>/dev/null)" != "$(sha "$POM")" ]; then
  say "resolving the Java drivers of $POM"
  rm -rf "$CACHE/java-lib"
  # (Maven 3.8 prints colour resets even in batch mode: strip them.)
  mvn -q -B -f "$POM" -Dmaven.repo.local="$CACHE/m2" dependency:copy-dependencies -DoutputDirectory="$CACHE/java-lib" 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g'
  sha "$POM" > "$CACHE/java-lib/.pom.sha256"
fi
CLASS=$CACHE/java-classes/Matrix.class
if [ ! -f "$CLASS" ] || [ "$CLIENTS/java/Matrix.java" -nt "$CLASS" ] || [ "$CACHE/java-lib/.pom.sha256" -nt "$CLASS" ]; then
  say "compiling $CLIENTS/java/Matrix.java"
  rm -rf "$CACHE/java-classes"
  javac -d "$CACHE/java-classes" -cp "$CACHE/java-lib/*" "$CLIENTS/java/Matrix.java"
fi

# --- Python: mysql-connector-python and PyMySQL in a venv ------------------
REQ=$CLIENTS/python/requirements.txt
if [ ! -x "$CACHE/venv/bin/python" ]; then
  say "creating the Python venv .cache/venv"
  python3 -m venv "$CACHE/venv"
fi
if [ "$(cat "$CACHE/venv/.requirements.sha256" 2>/dev/null)" != "$(sha "$REQ")" ]; then
  say "installing $REQ"
  "$CACHE/venv/bin/pip" install -q --disable-pip-version-check --cache-dir "$CACHE/pip" -r "$REQ"
  sha "$REQ" > "$CACHE/venv/.requirements.sha256"
fi

# --- node: mysql2 ----------------------------------------------------------
NODE=$CLIENTS/node
if [ "$(cat "$NODE/node_modules/.package-lock.sha256" 2>/dev/null)" != "$(sha "$NODE/package-lock.json")" ]; then
  say "npm ci in $NODE"
  (cd "$NODE" && npm ci --cache "$CACHE/npm" --no-audit --no-fund --loglevel=error >/dev/null)
  sha "$NODE/package-lock.json" > "$NODE/node_modules/.package-lock.sha256"
fi
