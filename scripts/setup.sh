#!/usr/bin/env bash
# Set up a fresh Debian 12 machine for mcp-code-exec development and CI, as root.
# Idempotent: a second run only checks and returns in a few seconds.
#   - the Debian packages in APT_PACKAGES below: podman + runc, docker.io (dockerd without bridge or
#     iptables), runsc (gVisor), debootstrap, and the tools the tests call
#   - bun (from npm)
#   - podman configured for this kind of host (runc, cgroupfs, runsc registered)
#   - dockerd started in the background (scripts/start-dockerd.sh)
#   - npm dependencies (bun install) and the sandbox images (batteries and slim) in podman and docker
#   - the OTLP receiver the telemetry tests read from (scripts/otlp-receiver.sh: Jaeger v2 built from
#     the Go module proxy with the machine's Go, cached in /var/cache/mcp-code-exec)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*" >&2; }
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"

# Every Debian package the product, the tests and these scripts use, even those a usual Debian machine
# has: test/ci/host-packages.test.ts checks each host program against this list (and what it requires).
#   engines and OCI runtimes: podman (with conmon), runc, docker.io (with containerd), runsc (gVisor)
#   image build: debootstrap, ca-certificates (and curl, below)
#   image registry for the pull and publish tests: docker-registry (the CNCF distribution registry)
#   tests and scripts: procps (pgrep, pkill, kill), mount, util-linux (unshare, setsid), python3,
#   nodejs (node, npm), curl, wget, perl (shasum), ruby (the Homebrew formula check), apt, git (a real
#   repository for the GitHub Copilot CLI test), python3-pip (scripts/test-wheels.sh, the install bench's floor)
# No init helper (catatonit, tini) is needed: the sandbox brings its own PID 1.
APT_PACKAGES=(podman conmon runc docker.io runsc debootstrap ca-certificates docker-registry procps mount util-linux python3 nodejs curl wget perl ruby apt git python3-pip)
missing=()
for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v bun >/dev/null 2>&1; then
  log "installing bun from npm"
  npm install -g bun >/dev/null 2>&1
fi
log "bun $(bun --version)"

# Podman 4.3 on a hybrid cgroup v1 host: crun fails ("cgroups in hybrid mode not supported"), runc with
# the cgroupfs manager works. gVisor is registered as the OCI runtime "runsc".
CONF=/etc/containers/containers.conf
MARK="# managed by mcp-code-exec scripts/setup.sh"
if ! grep -qF "$MARK" "$CONF" 2>/dev/null; then
  log "writing $CONF (runtime runc, cgroupfs, runsc registered)"
  $SUDO mkdir -p /etc/containers
  $SUDO tee "$CONF" >/dev/null <<CONF_EOF
$MARK
[containers]
default_ulimits = ["nofile=1024:1024"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"

[engine.runtimes]
runc = ["/usr/bin/runc", "/usr/sbin/runc"]
runsc = ["/usr/bin/runsc", "/usr/sbin/runsc"]
CONF_EOF
fi

# The tests run a registry on loopback (test/support/oci-registry.ts) over plain HTTP. docker treats
# 127.0.0.0/8 as insecure by default; podman needs each host:port named. Debian's package would start
# one on :5000 under systemd; the tests start their own.
REG_CONF=/etc/containers/registries.conf.d/50-mcp-code-exec-test-registry.conf
if [ ! -s "$REG_CONF" ]; then
  log "marking the test registries on 127.0.0.1:47400-47409 insecure for podman ($REG_CONF)"
  $SUDO mkdir -p "$(dirname "$REG_CONF")"
  for port in $(seq 47400 47409); do printf '[[registry]]\nlocation = "127.0.0.1:%s"\ninsecure = true\n\n' "$port"; done | $SUDO tee "$REG_CONF" >/dev/null
fi

bash scripts/start-dockerd.sh

log "installing npm dependencies"
bun install --frozen-lockfile >/dev/null 2>&1 || bun install >/dev/null

# The sandbox image (docs/packages.md), batteries and slim, under the bridge's default names: built from
# image/'s pins, cached in /var/cache/mcp-code-exec (a second run only checks the labels). When Debian has
# moved past image/debian.lock, a fresh machine cannot get the locked .debs: the suite still gets an
# image from the mirror's versions (its label says so, and the image-features test fails on it) and
# this says to refresh the lock.
image_build() { bun src/main.ts image build "$@" >/dev/null && bun src/main.ts image build --variant slim "$@" >/dev/null; }
if ! image_build; then
  log "WARNING: the sandbox image could not be built from image/debian.lock; building from the mirror's Debian versions."
  log "WARNING: if Debian moved on (see the packages named above), refresh the lock: bash scripts/lock-image.sh, and commit image/*.lock"
  image_build --debian-unlocked
fi
bash scripts/test-wheels.sh

# Cached: ~5 ms when built; on a machine without the cache it compiles for 5 to 15 minutes (DEVELOPERS.md).
# An assignment, not an argument of log: a failed build must stop setup (set -e).
receiver=$(bash scripts/otlp-receiver.sh)
log "OTLP receiver: $receiver"

# The single-node Kubernetes cluster the kubernetes engine's suites use (docs/kubernetes.md): built once
# per machine (cached; tens of minutes cold), then up in under a minute, seconds when it already runs.
# Not fatal here: the tests that need it say how to bring it up, and .ci/run tries again from stopped.
if kubeconfig=$(bash scripts/kube-up.sh | tail -1); then
  log "test cluster: $kubeconfig"
else
  log "WARNING: the test cluster did not come up (see the [kube-up] lines above and /var/log/mcp-code-exec-kube/); bash scripts/kube-up.sh tries again"
fi
log "ready"
