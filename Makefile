# Lorebase. `make run` starts a local Keeper with a demo Domain on a
# throwaway PostgreSQL; `make test` runs every test (with go vet and
# staticcheck).
GO ?= go
STATICCHECK_VERSION ?= v0.8.2
PKGS := ./...

.PHONY: run test unit lint vet staticcheck migrate build bench fmt

build:
	$(GO) build -o bin/keeper ./cmd/keeper

run:
	$(GO) run ./cmd/keeper run

test: vet staticcheck unit

unit:
	$(GO) test -count=1 -timeout 20m $(PKGS)

vet:
	$(GO) vet $(PKGS)

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

lint: vet staticcheck
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }

fmt:
	gofmt -w .

migrate:
	$(GO) run ./cmd/keeper migrate

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./commit/ ./reads/
