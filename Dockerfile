# syntax=docker/dockerfile:1
# One image, two programs: /manager (the operator) and /bridge. The operator
# runs bridges with its own image (BRIDGE_IMAGE), so one tag pins both.
# Static builds (no cgo: SQLite runs as pure Go) on a distroless nonroot base.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t msgbridge:<tag> .
#   (make docker-build does this; buildx --platform cross-compiles, no emulation)

# The build stage runs on the builder's own platform and cross-compiles.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
# Modules first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
# go.mod replaces whatsmeow with this patched copy (third_party/PATCH.md).
COPY third_party/whatsmeow third_party/whatsmeow
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ENV CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    ldflags="-s -w -X github.com/msgbridge/msgbridge/contract.Version=${VERSION}" && \
    go build -trimpath -ldflags "$ldflags" -o /out/manager . && \
    go build -trimpath -ldflags "$ldflags" -o /out/bridge ./bridge/cmd/bridge

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.title="msgbridge" \
      org.opencontainers.image.description="WhatsApp bridge (/bridge) and its Kubernetes operator (/manager)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /out/manager /manager
COPY --from=build /out/bridge /bridge
# 65532 is distroless's nonroot user; numeric, so that runAsNonRoot can
# verify it without reading /etc/passwd.
USER 65532:65532
ENTRYPOINT ["/manager"]
