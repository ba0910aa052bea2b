#!/usr/bin/env bash
# Build, once, the real OTLP receiver the tests send telemetry to: Jaeger v2 all-in-one (an OpenTelemetry
# Collector distribution with the OTLP receiver, in-memory trace storage and Jaeger's HTTP query API),
# compiled from the Go module proxy. No GitHub download and no image registry are needed.
#   - the binary is cached outside the repository as $CACHE/bin/jaeger-<version>; a second run only
#     checks that it is there (well under a second)
#   - Go's module and build caches live in $CACHE/go, so a rebuild (a version bump) is fast too
#   - the last line printed is the binary's path (test/support/otlp-receiver.ts looks in the same place)
# Idempotent and safe to run twice at once (flock). Needs Go >= 1.24 on PATH (Debian 12's golang-go is
# 1.19, too old: the machine image brings Go 1.26 in /usr/local/go).
# Override the cache with MCP_CODE_EXEC_CACHE (the tests read the same variable).
set -euo pipefail

JAEGER_MODULE=github.com/jaegertracing/jaeger
# The Go module's version; the binary built from it is Jaeger v2 (the v1 module line carries both).
JAEGER_VERSION=v1.76.0
CACHE=${MCP_CODE_EXEC_CACHE:-/var/cache/mcp-code-exec}
BIN="$CACHE/bin/jaeger-$JAEGER_VERSION"

log() { printf '[otlp-receiver] %s\n' "$*" >&2; }

if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  for d in /usr/local/go/bin /usr/lib/go/bin; do [ -x "$d/go" ] && PATH="$d:$PATH" && break; done
fi
if ! command -v go >/dev/null 2>&1; then
  log "go not found: install Go >= 1.24 (https://go.dev/dl/) and run this script again"
  exit 1
fi

mkdir -p "$CACHE/bin" "$CACHE/go"
exec 9>"$CACHE/go/jaeger-$JAEGER_VERSION.lock"
flock 9
if [ -x "$BIN" ]; then # another run built it while we waited for the lock
  echo "$BIN"
  exit 0
fi

export GOPATH="$CACHE/go/path" GOMODCACHE="$CACHE/go/mod" GOCACHE="$CACHE/go/build"
# Never fetch another toolchain; never read a go.work or flags from the caller's environment.
export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0

# Jaeger's go.mod has a replace directive, so `go install module@version` refuses it: build it as a
# tool of a throwaway module instead, with the same replace so the dependency graph is upstream's.
work="$CACHE/go/jaeger-$JAEGER_VERSION-module"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
log "building Jaeger $JAEGER_VERSION from the Go module proxy (cold: 5 to 15 minutes on 2 cores, see DEVELOPERS.md)"
start=$(date +%s)
go mod init mcp-code-exec.local/otlp-receiver >/dev/null 2>&1
go mod edit -replace github.com/Shopify/sarama=github.com/Shopify/sarama@v1.33.0
if ! go get -tool "$JAEGER_MODULE/cmd/jaeger@$JAEGER_VERSION" >go-get.log 2>&1; then
  log "go get failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY)):"
  cat go-get.log >&2
  exit 1
fi
grep -v '^go: \(downloading\|added\|upgraded\|finding\) ' go-get.log >&2 || true # warnings only
fetched=$(date +%s)
log "modules fetched in $((fetched - start)) s; compiling"
go build -trimpath -ldflags "-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=$JAEGER_VERSION" \
  -o "$BIN.tmp" "$JAEGER_MODULE/cmd/jaeger" >&2
if ! out=$("$BIN.tmp" --help 2>&1); then
  log "the built binary does not run:"
  printf '%s\n' "$out" >&2
  exit 1
fi
mv -f "$BIN.tmp" "$BIN"
log "built in $(($(date +%s) - start)) s (compiling $(($(date +%s) - fetched)) s): $(du -h "$BIN" | cut -f1) $BIN"
echo "$BIN"
