#!/usr/bin/env bash
# Set up a fresh Debian 12 machine for mcp-code-exec development and CI, as root.
# Idempotent: a second run only checks and returns in a few seconds.
#   - the Debian packages in APT_PACKAGES below: podman + runc, docker.io (dockerd without bridge or
#     iptables), runsc (gVisor), debootstrap, and the tools the tests call
#   - bun (from npm)
#   - podman configured for this kind of host (runc, cgroupfs, runsc registered)
#   - dockerd started in the background (scripts/start-dockerd.sh)
#   - npm dependencies (bun install) and the offline sandbox image in podman and docker
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*" >&2; }
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"

# Every Debian package the product, the tests and these scripts use, even those a usual Debian machine
# has: test/ci/host-packages.test.ts checks each host program against this list (and what it requires).
#   engines and OCI runtimes: podman (with conmon), runc, docker.io (with containerd), runsc (gVisor)
#   image build: debootstrap, ca-certificates
#   tests and scripts: procps (pgrep, pkill, kill), mount, util-linux (unshare, setsid), python3,
#   nodejs (node, npm), curl, wget, perl (shasum), ruby (the Homebrew formula check), apt, git (a real
#   repository for the GitHub Copilot CLI test), python3-pip (scripts/test-wheels.sh, the install bench's floor)
# No init helper (catatonit, tini) is needed: the sandbox brings its own PID 1.
APT_PACKAGES=(podman conmon runc docker.io runsc debootstrap ca-certificates procps mount util-linux python3 nodejs curl wget perl ruby apt git python3-pip)
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

bash scripts/start-dockerd.sh

log "installing npm dependencies"
bun install --frozen-lockfile >/dev/null 2>&1 || bun install >/dev/null

bash scripts/build-image.sh
bash scripts/test-wheels.sh
log "ready"
