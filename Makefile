# galeon — the two commands are `make up` and `make test` (see README).
SHELL := /bin/bash
GO ?= go
GOBIN_DIR := $(shell $(GO) env GOPATH 2>/dev/null)/bin
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
SANDBOX ?= galeon

.PHONY: up down deps drivers build test unit integration lint fuzz bench faults clean

SBDIR := /var/tmp/galeon/$(SANDBOX)

## up: install what is missing, build, start a 3-node sandbox cluster and the proxy in front of it (idempotent)
up: deps build
	@if [ -f $(SBDIR)/sandbox.json ]; then \
		bin/galeon sandbox start --name $(SANDBOX) && bin/galeon sandbox status --name $(SANDBOX); \
	else \
		bin/galeon sandbox up --name $(SANDBOX); \
	fi
	@[ -f $(SBDIR)/galeon.toml ] || { bin/galeon sandbox proxy-config --name $(SANDBOX) > $(SBDIR)/galeon.toml && chmod 600 $(SBDIR)/galeon.toml; }
	@bin/galeon proxy stop --pid-file $(SBDIR)/galeon-proxy.pid >/dev/null 2>&1 || true
	@echo; bin/galeon proxy --config $(SBDIR)/galeon.toml --background
	@echo; echo "connect through galeon:"; \
	 eval $$(bin/galeon sandbox env --name $(SANDBOX)); \
	 echo "  mariadb -h127.0.0.1 -P6033 -u$$GALEON_APP_USER -p'$$GALEON_APP_PASSWORD' app"

## down: stop the proxy and destroy the sandbox started by `make up`
down: build
	-bin/galeon proxy stop --pid-file $(SBDIR)/galeon-proxy.pid
	bin/galeon sandbox destroy --name $(SANDBOX)

deps:
	@scripts/install-deps.sh

## drivers: install the driver-matrix clients that are missing (Java, Python, node, PHP; cached in .cache/)
drivers: deps
	@scripts/install-drivers.sh

build:
	@scripts/build-web.sh
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/galeon ./cmd/galeon

## test: install what is missing, lint, unit tests, fuzz smoke, integration tests against real Galera
test: deps build lint unit fuzz integration

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GOBIN_DIR)/staticcheck ./...
	sh scripts/check-doc-links.sh

unit:
	@set -o pipefail; $(GO) test -json -count=1 -timeout 10m $$($(GO) list ./... | grep -v /test/) 2>&1 | $(GO) run ./scripts/testreport -brief -log /tmp/galeon-unit.log

# Each fuzz target runs a bounded number of executions (a count, not a
# duration: a duration can end mid-run and Go then reports "context deadline
# exceeded" as a failure without any failing input); any panic fails the build.
FUZZTIME ?= 20000x
# The proxy's fuzzers run a whole session over sockets per input (3.5 and
# 5.6 ms each here): 20,000 inputs took 69 s and 113 s of a CI run, the
# other 13 targets 45 s together. They get fewer inputs.
FUZZ_SLOW ?= FuzzSession FuzzRelay
FUZZTIME_SLOW ?= 4000x
fuzz:
	@set -e; for pkg in $$($(GO) list ./internal/...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			t=$(FUZZTIME); case " $(FUZZ_SLOW) " in *" $$f "*) t=$(FUZZTIME_SLOW);; esac; \
			echo "fuzz $$pkg $$f ($$t)"; \
			$(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$$t $$pkg > /tmp/galeon-fuzz.log 2>&1 || { cat /tmp/galeon-fuzz.log; exit 1; }; \
		done; \
	done

# Integration tests start real sandboxes: one package at a time, so two
# clusters never compete for the 2 cores. scripts/testreport streams a short
# log, keeps the whole one in /tmp/galeon-integration.log and ends with the
# failing tests and their messages, where a CI page's tail shows them.
integration: build drivers
	@set -o pipefail; $(GO) test -json -count=1 -p 1 -timeout 45m ./test/... 2>&1 | $(GO) run ./scripts/testreport -log /tmp/galeon-integration.log

## bench: direct vs HAProxy vs galeon on a private sandbox (~8 min); report in bench/results/latest.md
bench: deps build
	bench/run.sh

## faults: write outage per proxy for the control plane's faults (writer kill -9 and SIGSTOP, etcd down and back, both), FAULT_RUNS times each
FAULT_RUNS ?= 5
faults: deps build
	GALEON_FAULT_RUNS=$(FAULT_RUNS) $(GO) test -count=1 -run TestFaultFigures -v -timeout 60m ./test/control/ 2>&1 | grep -E 'FIGURE|^(---|ok|FAIL)|outage per proxy|client errors'

clean:
	rm -rf bin
