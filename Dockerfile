# One image, two programs: /manager (the operator) and /bridge.
# Static builds (no cgo: SQLite runs as pure Go), on a distroless nonroot base.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ENV CGO_ENABLED=0
RUN go build -trimpath -ldflags "-s -w -X github.com/msgbridge/msgbridge/bridge/version.Version=${VERSION}" -o /out/manager . && \
    go build -trimpath -ldflags "-s -w -X github.com/msgbridge/msgbridge/bridge/version.Version=${VERSION}" -o /out/bridge ./bridge/cmd/bridge

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/manager /manager
COPY --from=build /out/bridge /bridge
USER 65532:65532
ENTRYPOINT ["/manager"]
