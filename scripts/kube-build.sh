#!/usr/bin/env bash
# Builds the programs the test cluster (scripts/kube-up.sh) runs, from the Go module proxy, once per
# machine, cached under $KUBE_CACHE (default /var/cache/mcp-code-exec/kube), outside the repository:
#   - kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kubectl (k8s.io/kubernetes)
#   - agent-sandbox-controller (sigs.k8s.io/agent-sandbox: Sandbox, SandboxClaim, SandboxWarmPool)
#   - kube-network-policies (sigs.k8s.io/kube-network-policies: enforces NetworkPolicy)
# No Kubernetes distribution is packaged for Debian 12 and no download site is reachable here, but
# k8s.io/kubernetes is a Go module: it pins its ~30 staging modules (k8s.io/api, client-go, ...) to
# v0.0.0 with local replaces, which a module that requires it cannot use. A wrapper module requires
# k8s.io/kubernetes and replaces each staging module with its published v0.<minor>.<patch>.
#
# Idempotent: a program already built with the same version and flags is not built again (a marker
# beside it records them), so a warm run takes a second. Prints the folder with all seven binaries on
# its last line. Measured cold on this 2-core machine under other agents' load (~15): see the commit
# that added this script.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.32.13}"
AGENT_SANDBOX_VERSION="${AGENT_SANDBOX_VERSION:-v0.5.6}"
NETWORK_POLICIES_VERSION="${NETWORK_POLICIES_VERSION:-v0.8.0}"
GVISOR_VERSION="${GVISOR_VERSION:-v0.0.0-20260905035102-160fafc42237}"
KUBE_CACHE="${KUBE_CACHE:-/var/cache/mcp-code-exec/kube}"
BIN="$KUBE_CACHE/$KUBE_VERSION/bin"
COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
# No cgo (static binaries, no C toolchain in the loop); -trimpath and -s -w keep them small.
LDFLAGS_BASE="-s -w"

log() { echo "[kube-build] $*" >&2; }

command -v go >/dev/null || { log "go not found: install Go 1.23 or later"; exit 1; }
export GOTOOLCHAIN=local CGO_ENABLED=0
export GOFLAGS="-mod=mod -buildvcs=false"
mkdir -p "$KUBE_CACHE"
# One build at a time per machine (CI and a developer may both call this).
exec 9>"$KUBE_CACHE/.lock"
flock 9

# up_to_date DIR KEY PROGRAMS...: the programs exist in DIR, built with KEY.
up_to_date() {
  local dir=$1 key=$2; shift 2
  [[ -f "$dir/.built" && "$(cat "$dir/.built")" == "$key" ]] || return 1
  for p in "$@"; do [[ -x "$dir/$p" ]] || return 1; done
}

# The version of staging module $1 to use for $2 (v0.<minor>.<patch>): $2 when the proxy serves it,
# else the newest earlier v0.<minor>.<p> it serves. (Its version list is no guide to what it serves:
# some versions it serves are not listed, some listed ones are refused; k8s.io/endpointslice
# v0.32.13 is refused.) Modules the build never needs (the samples) keep $2 whatever the proxy says.
staging_pick() {
  local want="$2" minor patch v
  go mod download "$1@$want" 2>/dev/null && { echo "$want"; return; }
  minor="$(cut -d. -f2 <<<"$want")"; patch="$(cut -d. -f3 <<<"$want")"
  for v in $(go list -m -versions "$1" 2>/dev/null | tr ' ' '\n' | grep -E "^v0\.$minor\.[0-9]+$" | sort -t. -k3,3nr); do
    (( "$(cut -d. -f3 <<<"$v")" < patch )) || continue
    if go mod download "$1@$v" 2>/dev/null; then
      log "$1 $want is not served: using $v"
      echo "$v"
      return
    fi
  done
  log "the module proxy serves no $1 v0.$minor.x up to $want (fine unless the build needs it)"
  echo "$want"
}

build_kubernetes() {
  local src="$KUBE_CACHE/$KUBE_VERSION/src" minor ldflags="$LDFLAGS_BASE" key
  minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  key="$KUBE_VERSION $ldflags"
  up_to_date "$BIN" "$key" "${COMMANDS[@]}" && return 0
  mkdir -p "$src" "$BIN"
  cd "$src"
  if [[ ! -f go.mod ]] || ! grep -q "k8s.io/kubernetes $KUBE_VERSION" go.mod; then
    log "resolving k8s.io/kubernetes@$KUBE_VERSION and its staging modules"
    local gomod staging_version="v0.${KUBE_VERSION#v1.}"
    gomod="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^\s*"GoMod": "\(.*\)",\?$/\1/p')"
    [[ -f "$gomod" ]] || { log "could not download k8s.io/kubernetes@$KUBE_VERSION's go.mod"; exit 1; }
    {
      echo "module mcp-code-exec.local/kube-build"
      echo
      echo "go $(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod")"
      echo
      echo "require k8s.io/kubernetes $KUBE_VERSION"
      echo
      # Every `k8s.io/x => ./staging/src/k8s.io/x` becomes `k8s.io/x => k8s.io/x v0.<minor>.<patch>`.
      for m in $(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/[a-z0-9-]*$#\1#p' "$gomod"); do
        echo "replace $m => $m $(staging_pick "$m" "$staging_version")"
      done
    } > go.mod.new
    mv go.mod.new go.mod
  fi
  local pkgs=() started=$SECONDS
  for c in "${COMMANDS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  log "building ${COMMANDS[*]} $KUBE_VERSION (cold: about an hour on 2 busy cores; the Go build cache keeps the work)"
  # One `go build` for all five: the packages they share are compiled once.
  go build -trimpath -ldflags "$ldflags" -o "$BIN/" "${pkgs[@]}"
  echo "$key" > "$BIN/.built"
  log "kubernetes built in $((SECONDS - started)) s (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
}

# build_module NAME MODULE VERSION PACKAGE: one program of a module that has no local replaces.
# `go install pkg@version` would do, but it asks the proxy for the module's version list, which the
# proxy here refuses for these two; a wrapper module that requires the version does not ask.
build_module() {
  local name=$1 module=$2 version=$3 pkg=$4 dir="$KUBE_CACHE/$1-$3" key started=$SECONDS
  key="$module@$version $LDFLAGS_BASE"
  up_to_date "$dir/bin" "$key" "$name" || {
    mkdir -p "$dir/src" "$dir/bin"
    cd "$dir/src"
    printf 'module mcp-code-exec.local/%s-build\n\ngo %s\n\nrequire %s %s\n' "$name" "$(go env GOVERSION | sed 's/^go//')" "$module" "$version" > go.mod
    log "building $name $version"
    go build -trimpath -ldflags "$LDFLAGS_BASE" -o "$dir/bin/$name" "$pkg"
    echo "$key" > "$dir/bin/.built"
    log "$name built in $((SECONDS - started)) s"
  }
  cp -f "$dir/bin/$name" "$BIN/$name.new" && mv -f "$BIN/$name.new" "$BIN/$name"
}

# gVisor's containerd shim and a runsc of the same commit. Debian's runsc (2022) comes without the shim,
# and under the runc shim a runsc container's stdin is never connected (no attach). gvisor.dev/gvisor's
# `go` branch is the Go-buildable one; the proxy serves it only as a pseudo-version (no tags, no branch
# queries), so the version is pinned here. Cold: 2m50s on 2 busy cores.
build_gvisor() {
  local dir="$KUBE_CACHE/gvisor-$GVISOR_VERSION" key="gvisor.dev/gvisor@$GVISOR_VERSION $LDFLAGS_BASE oom-patch" started=$SECONDS
  up_to_date "$dir/bin" "$key" containerd-shim-runsc-v1 runsc && { echo "$dir/bin"; return; }
  mkdir -p "$dir/src" "$dir/bin"
  cd "$dir/src"
  printf 'module mcp-code-exec.local/gvisor-build\n\ngo %s\n\nrequire gvisor.dev/gvisor %s\n' "$(go env GOVERSION | sed 's/^go//')" "$GVISOR_VERSION" > go.mod
  log "building gVisor's runsc and containerd-shim-runsc-v1 ($GVISOR_VERSION)"
  # The shim lowers its own oom_score_adj to -999, which needs CAP_SYS_RESOURCE; root on hosts like this
  # one (and in many CI sandboxes) lacks it, and the shim then refuses to start any pod. containerd's own
  # runc shim is told to skip that (restrict_oom_score_adj, kube-up.sh); gVisor's shim has no such
  # setting, so it is built from a copy of the module (71 MB, in the cache) whose shim goes on when the
  # kernel says no: one line of pkg/shim/v1/manager.go.
  go mod download gvisor.dev/gvisor || return 1
  local upstream; upstream="$(go list -m -f '{{.Dir}}' gvisor.dev/gvisor)" || return 1
  rm -rf "$dir/src/gvisor" && cp -r "$upstream" "$dir/src/gvisor" && chmod -R u+w "$dir/src/gvisor" || return 1
  local manager="$dir/src/gvisor/pkg/shim/v1/manager.go"
  grep -q 'sys.SetOOMScore(cmd.Process.Pid, oomScoreMax); err != nil {' "$manager" || { log "gVisor's shim changed: its oom_score_adj patch no longer applies"; return 1; }
  sed -i 's/sys.SetOOMScore(cmd.Process.Pid, oomScoreMax); err != nil {/sys.SetOOMScore(cmd.Process.Pid, oomScoreMax); err != nil \&\& !os.IsPermission(err) {/' "$manager"
  printf 'replace gvisor.dev/gvisor => ./gvisor\n' >> go.mod
  # (errexit does not reach into this function: it runs as an `if` condition)
  go build -trimpath -ldflags "$LDFLAGS_BASE" -o "$dir/bin/" gvisor.dev/gvisor/shim gvisor.dev/gvisor/runsc || return 1
  mv -f "$dir/bin/shim" "$dir/bin/containerd-shim-runsc-v1" || return 1
  echo "$key" > "$dir/bin/.built"
  log "gVisor built in $((SECONDS - started)) s"
  echo "$dir/bin"
}

build_kubernetes
# gVisor is optional for the cluster: a failed build leaves gVisor pods unavailable, not the cluster.
if gvisor_bin="$(build_gvisor)"; then ln -sfn "$gvisor_bin" "$KUBE_CACHE/gvisor"; else log "gVisor's shim did not build: gVisor pods will not run (see above)"; fi
build_module agent-sandbox-controller sigs.k8s.io/agent-sandbox "$AGENT_SANDBOX_VERSION" sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller
build_module kube-network-policies sigs.k8s.io/kube-network-policies "$NETWORK_POLICIES_VERSION" sigs.k8s.io/kube-network-policies/cmd
echo "$BIN"
