#!/usr/bin/env bash
# Refresh the sandbox image's pins from the network: image/debian.lock (every Debian package of the
# base, with its version and the sha256 of its .deb) and image/wheels.lock (every wheel the packages of
# image/python-top40.json need, resolved by pip for the base's own Python, with its sha256 and URL).
# Run it when the list changes, when Debian moves on (a point release or a security fix), or to take
# newer releases from PyPI; then rebuild (scripts/build-image.sh) and commit the locks.
#
#   scripts/lock-image.sh [--mirror URL]        (Linux, root, debootstrap; reaches Debian and PyPI)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../image/recipe.sh
. "$HERE/image/recipe.sh"
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
while [ $# -gt 0 ]; do
  case "$1" in
    --mirror) MIRROR=$2; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
log() { printf '[lock] %s\n' "$*" >&2; }
for tool in debootstrap curl sha256sum dpkg-deb; do
  command -v "$tool" >/dev/null || { log "$tool missing"; exit 1; }
done

ROOT=$(mktemp -d /var/tmp/mcp-code-exec-lock.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
log "debootstrap $SUITE ($ARCH) from $MIRROR"
debootstrap --variant=minbase --arch="$ARCH" --include="$INCLUDE" "$SUITE" "$ROOT" "$MIRROR" >"$ROOT.log" 2>&1 \
  || { tail -20 "$ROOT.log" >&2; exit 1; }
rm -f "$ROOT.log"

{
  echo "# Debian packages of the sandbox image's base, from scripts/lock-image.sh ($(date -u +%F), $MIRROR)."
  echo "# suite $SUITE arch $ARCH include $INCLUDE"
  echo "# package version architecture sha256"
  for f in "$ROOT"/var/cache/apt/archives/*.deb; do
    printf '%s %s %s %s\n' "$(dpkg-deb -f "$f" Package)" "$(dpkg-deb -f "$f" Version)" "$(dpkg-deb -f "$f" Architecture)" \
      "$(sha256sum <"$f" | cut -c1-64)"
  done | sort
} >"$HERE/image/debian.lock.tmp"
mv "$HERE/image/debian.lock.tmp" "$HERE/image/debian.lock"
log "image/debian.lock: $(grep -vc '^#' "$HERE/image/debian.lock") packages"

# pip itself, the newest wheel (it resolves here and installs at build time; it is not put in the image).
W="$ROOT/tmp/lock"
mkdir -p "$W"
read -r PIP_URL PIP_SHA < <(curl -fsSL https://pypi.org/pypi/pip/json | chroot "$ROOT" python3 -c '
import json, sys, urllib.parse
for f in json.load(sys.stdin)["urls"]:
    if f["packagetype"] == "bdist_wheel":
        print(urllib.parse.urljoin("https://pypi.org/pypi/pip/json", f["url"]), f["digests"]["sha256"])
        break')
curl -fsSL -o "$W/${PIP_URL##*/}" "$PIP_URL"
[ "$(sha256sum <"$W/${PIP_URL##*/}" | cut -c1-64)" = "$PIP_SHA" ] || { log "pip wheel does not match PyPI's sha256"; exit 1; }
# The resolution runs in the new root, so markers and wheel tags are those of its Python and glibc.
# The host's CA bundle goes along (a proxy that re-signs TLS is trusted there, not in a fresh root).
cp /etc/ssl/certs/ca-certificates.crt "$W/ca.crt"
cp "$HERE/image/python-top40.json" "$W/"
cp "$HERE/image/lock-wheels.py" "$W/"
PIP="/tmp/lock/${PIP_URL##*/}/pip"
chroot "$ROOT" python3 -c 'import json; print("\n".join(p["distribution"] for p in json.load(open("/tmp/lock/python-top40.json"))["packages"]))' \
  >"$W/requirements.in"
log "resolving $(wc -l <"$W/requirements.in") distributions with pip for $(chroot "$ROOT" python3 -V)"
chroot "$ROOT" env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 python3 "$PIP" install --dry-run --ignore-installed \
  --only-binary :all: --cert /tmp/lock/ca.crt --disable-pip-version-check --quiet --report /tmp/lock/report.json \
  -r /tmp/lock/requirements.in
chroot "$ROOT" env -i PATH=/usr/bin:/bin LANG=C.UTF-8 python3 /tmp/lock/lock-wheels.py /tmp/lock/report.json \
  "/tmp/lock/${PIP_URL##*/}" "$PIP_URL" "$PIP_SHA" "$SUITE" >"$HERE/image/wheels.lock.tmp"
mv "$HERE/image/wheels.lock.tmp" "$HERE/image/wheels.lock"
log "image/wheels.lock: $(grep -vc '^#' "$HERE/image/wheels.lock") wheels"
