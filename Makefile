# Lorebase. `make run` starts a local Keeper with a demo Domain on a
# throwaway PostgreSQL; `make test` runs every test (with go vet,
# staticcheck, golangci-lint (.golangci.yaml) and gofmt).
GO ?= go
STATICCHECK_VERSION ?= v0.8.2
GOLANGCI_LINT_VERSION ?= v2.15.0
PKGS := ./...

.PHONY: run test unit lint vet staticcheck golangci-lint fmtcheck migrate build bench fmt perf-up perf-stop perf-down perf-url perf-100k perf-1m perf-10m perf-check perf-baseline

build:
	$(GO) build -o bin/keeper ./cmd/keeper
	$(GO) build -o bin/storage ./cmd/storage

run:
	$(GO) run ./cmd/keeper run

test: vet staticcheck golangci-lint fmtcheck unit

unit:
	$(GO) test -count=1 -timeout 20m $(PKGS)

vet:
	$(GO) vet $(PKGS)

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

golangci-lint:
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run ./...

fmtcheck:
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }

lint: vet staticcheck golangci-lint fmtcheck

fmt:
	gofmt -w .

migrate:
	$(GO) run ./cmd/keeper migrate

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./commit/ ./reads/

# Perf harness (docs/perf-harness.md). perf-up starts a long-lived
# PostgreSQL from the machine's binaries under $(PERF_DIR), sized by the
# storage profile $(PERF_PROFILE); the perf-* runs load their seed database
# there once (--seed-database) and measure a fresh copy of it. perf-stop
# stops the server and keeps its data (perf-up starts it again); perf-down
# stops the server and deletes its data, seed databases included.
PERF_DIR ?= .lorebase/perf-pg
PERF_PORT ?= 55432
PERF_PROFILE ?= 1m
PERF_OUT ?= docs/perf
PERF_FLAGS ?=
# PERF_PARTS names the parts to measure (--parts of perf/cmd/bench), e.g.
# PERF_PARTS=reads,writes; empty: every part.
PERF_PARTS ?=
# PERF_HUGE_PAGES=1 has perf-up reserve huge pages for the server's shared
# memory (root; perf-stop and perf-down give them back).
PERF_HUGE_PAGES ?=
PERF_PG = $(GO) run ./perf/cmd/perfpg
PERF_BENCH = $(GO) run ./perf/cmd/bench --extra-links 4 --profile $(PERF_PROFILE) \
	--database-url "$$($(PERF_PG) url --dir $(PERF_DIR))" $(if $(PERF_PARTS),--parts $(PERF_PARTS))

perf-up:
	@$(PERF_PG) up --dir $(PERF_DIR) --port $(PERF_PORT) --profile $(PERF_PROFILE) $(if $(PERF_HUGE_PAGES),--huge-pages)

perf-url:
	@$(PERF_PG) url --dir $(PERF_DIR)

perf-stop:
	$(PERF_PG) stop --dir $(PERF_DIR) --port $(PERF_PORT)

perf-down:
	$(PERF_PG) down --dir $(PERF_DIR) --port $(PERF_PORT)

perf-100k: perf-up
	$(PERF_BENCH) --scale 540 --seed-database perf_seed_100k --out $(PERF_OUT)/perf-100k.md $(PERF_FLAGS)

perf-1m: perf-up
	$(PERF_BENCH) --scale 5406 --iterations 1000 --warmup 100 --seed-database perf_seed_1m \
		--out $(PERF_OUT)/perf-1m.md $(PERF_FLAGS)

# 10M Records: the 1M dataset loaded through the commit pipeline, then its
# materialized rows copied 9 times with renumbered keys (--replicas 10),
# measured in place (a template copy would double the disk). The reads run
# cold (fresh keys) then warm (the same keys), each read, role and pass
# stopped after PERF_READ_LIMIT; add PERF_FLAGS=--prewarm to run storage
# prewarm first.
PERF_READ_LIMIT ?= 45s
perf-10m: perf-up
	$(PERF_BENCH) --scale 54060 --replicas 10 --iterations 300 --warmup 30 --seed-database perf_seed_10m --in-place \
		--cold-warm --read-time-limit $(PERF_READ_LIMIT) --out $(PERF_OUT)/perf-10m.md $(PERF_FLAGS)

# Regression gate: a short 100k pass over the reads (the seed database
# perf_seed_100k is loaded once, then copied), then storage prewarm and 7
# rounds over every read of 60 pairs each, a pair being one primary-key
# floor call and one call of the read made back to back (which goes first
# alternates). A read's ratio is the median over the rounds of each round's
# median pair ratio (read time over floor time), so a busier or quieter
# machine moves both sides of every pair. The check fails, naming the
# reads, past $(PERF_CHECK_TOLERANCE) times a read's ratio in
# $(PERF_BASELINE) (or the read's spread of rounds in the baseline run,
# where wider). perf-baseline writes the baseline (format 2) from the same
# pass; a baseline of the older format is refused. docs/perf-harness.md
# and docs/perf/perf-check-reliability.md describe and prove it.
PERF_BASELINE ?= docs/perf/perf-check-baseline.json
PERF_CHECK_TOLERANCE ?= 1.5
PERF_CHECK_OUT ?= .lorebase/perf-check.md
PERF_CHECK = $(PERF_BENCH) --scale 540 --seed-database perf_seed_100k --parts reads --iterations 300 --warmup 30 \
	--http=false --ranking-queries 0 --explain none --residency-top 0
perf-check: perf-up
	$(PERF_CHECK) --check-baseline $(PERF_BASELINE) --check-tolerance $(PERF_CHECK_TOLERANCE) --out $(PERF_CHECK_OUT) $(PERF_FLAGS)

perf-baseline: perf-up
	$(PERF_CHECK) --write-baseline $(PERF_BASELINE) --out $(PERF_CHECK_OUT) $(PERF_FLAGS)
