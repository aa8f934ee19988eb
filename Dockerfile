# The hub as a small static image: docker build --build-arg VERSION=v1.2.3 -t syncverse/hub:v1.2.3 .
# Configuration is through HUB_* variables (see config.yaml); README.md ("Deploying the hub") has the details.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Modules first, so a change to the code alone reuses the download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# Static (no cgo, so no libc in the final image), reproducible paths, version stamped for `hub version` and
# hub_build_info.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/hub .

# distroless/static: CA certificates (for rediss://) and tzdata, no shell, uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/hub /usr/local/bin/hub
USER nonroot:nonroot
# In a container the hub must listen on every interface. A non-loopback listen refuses to start without auth:
# set HUB_AUTH_HMAC_SECRET (or HUB_AUTH_PUBLIC_KEY_FILE / HUB_AUTH_JWKS_FILE), or HUB_AUTH_ANONYMOUS=true when a
# proxy in front authenticates clients. HUB_REDIS_URL must be set too: without it the hub runs an in-memory
# development server that loses everything on restart.
ENV HUB_LISTEN=0.0.0.0:8080 \
    HUB_LOG_FORMAT=json
EXPOSE 8080
# Liveness only; readiness (/readyz: Redis and the live subscription) belongs to the orchestrator's probe.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["/usr/local/bin/hub", "healthcheck"]
# SIGTERM (Docker's default stop signal) drains: streams end first, so clients reconnect to another replica.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/hub"]
CMD ["serve"]
