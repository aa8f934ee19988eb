# syntax=docker/dockerfile:1
# The hub as a small static image, for any platform from any build host:
#   docker build --build-arg VERSION=v1.2.3 --build-arg REVISION=$(git rev-parse HEAD) -t syncverse/hub:v1.2.3 .
#   docker buildx build --platform linux/amd64,linux/arm64 --build-arg VERSION=... --build-arg REVISION=... .
# Configuration is through HUB_* variables (see config.yaml); docs/deploy.md ("Container") has the details.

ARG GO_VERSION=1.26

# The compiler runs on the build host's own platform and cross-compiles (pure Go, no cgo): no emulation.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Modules first, so a change to the code alone reuses the download layer; the module and build caches persist
# between builds on one builder.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
ARG REVISION=unknown
# Static (no cgo, so no libc in the final image), reproducible paths, version and revision stamped for `hub version`
# and hub_build_info.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.revision=${REVISION}" -o /out/hub .

# distroless/static: CA certificates (for rediss://) and tzdata, no shell, uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="SyncVerse Progress Hub" \
      org.opencontainers.image.description="Workflow progress from AI agents, through Redis, to browsers over Server-Sent Events" \
      org.opencontainers.image.source="https://github.com/syncverse/hub" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /out/hub /usr/local/bin/hub
USER nonroot:nonroot
# In a container the hub must listen on every interface. A non-loopback listen refuses to start without auth:
# set HUB_AUTH_HMAC_SECRET (or HUB_AUTH_PUBLIC_KEY_FILE / HUB_AUTH_JWKS_FILE), or HUB_AUTH_ANONYMOUS=true when a
# proxy in front authenticates clients. HUB_REDIS_URL must be set too: without it the hub runs an in-memory
# development server that loses everything on restart. Logs are JSON lines on stderr.
ENV HUB_LISTEN=0.0.0.0:8080 \
    HUB_LOG_FORMAT=json
EXPOSE 8080
# Liveness only; readiness (/readyz: Redis and the live subscription) belongs to the orchestrator's probe.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["/usr/local/bin/hub", "healthcheck"]
# SIGTERM (Docker's default stop signal) drains: streams end first, so clients reconnect to another replica.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/hub"]
CMD ["serve"]
