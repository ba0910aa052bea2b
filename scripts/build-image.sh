#!/usr/bin/env bash
# Build the offline sandbox image from Debian packages (no image registry needed) and import it into
# every engine found here (podman, docker). Python 3.11 with numpy, pandas, matplotlib and Pillow.
#
#   scripts/build-image.sh [--force] [--engines "podman docker"] [--mirror URL] [--save FILE]
#
# Idempotent: engines that already have the image are skipped; the root filesystem tarball is cached
# in $MCP_BRIDGE_IMAGE_CACHE (default /var/cache/mcp-code-exec) so re-importing takes seconds.
set -euo pipefail
IMAGE=${MCP_BRIDGE_OFFLINE_IMAGE:-mcp-code-exec-sandbox:bookworm}
CACHE=${MCP_BRIDGE_IMAGE_CACHE:-/var/cache/mcp-code-exec}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
ENGINES=""
FORCE=0
SAVE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --force) FORCE=1 ;;
    --engines) ENGINES=$2; shift ;;
    --mirror) MIRROR=$2; shift ;;
    --save) SAVE=$2; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
log() { printf '[image] %s\n' "$*" >&2; }
if [ -z "$ENGINES" ]; then
  for e in podman docker; do command -v "$e" >/dev/null 2>&1 && ENGINES="$ENGINES $e"; done
fi

has_image() { # engine
  case "$1" in
    podman) podman image exists "$IMAGE" 2>/dev/null ;;
    *) "$1" image inspect "$IMAGE" >/dev/null 2>&1 ;;
  esac
}

todo=""
for e in $ENGINES; do
  if [ "$FORCE" = 1 ] || ! has_image "$e"; then todo="$todo $e"; fi
done
if [ -z "$todo" ] && [ -z "$SAVE" ]; then log "$IMAGE present in:$ENGINES"; exit 0; fi

TARBALL="$CACHE/sandbox-rootfs.tar"
if [ "$FORCE" = 1 ] || [ ! -s "$TARBALL" ]; then
  command -v debootstrap >/dev/null || { log "debootstrap missing: apt-get install debootstrap"; exit 1; }
  mkdir -p "$CACHE"
  ROOT=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  trap 'rm -rf "$ROOT"' EXIT
  log "debootstrap bookworm from $MIRROR (about a minute)"
  debootstrap --variant=minbase \
    --include=python3,python3-numpy,python3-pandas,python3-matplotlib,python3-pil,ca-certificates \
    bookworm "$ROOT" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
    || { tail -20 "$CACHE/debootstrap.log" >&2; exit 1; }
  # Slim it: package caches and lists, docs, man pages. Python byte-code stays (faster imports).
  rm -rf "$ROOT"/var/cache/apt/* "$ROOT"/var/lib/apt/lists/* "$ROOT"/usr/share/doc/* \
         "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* "$ROOT"/var/log/*
  # Pre-build matplotlib's font cache where a read-only root can still read it.
  mkdir -p "$ROOT/opt/mplconfig"
  chroot "$ROOT" env MPLCONFIGDIR=/opt/mplconfig python3 -c 'import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot' \
    >/dev/null 2>&1 || log "warning: matplotlib font cache not pre-built"
  chmod -R a+rX "$ROOT/opt/mplconfig"
  tar -C "$ROOT" --numeric-owner -cf "$TARBALL.tmp" . && mv "$TARBALL.tmp" "$TARBALL"
  rm -rf "$ROOT"; trap - EXIT
  log "rootfs: $(du -h "$TARBALL" | cut -f1)"
fi

CHANGES=(-c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
         -c 'ENV LANG=C.UTF-8' -c 'ENV MPLBACKEND=Agg'
         -c 'CMD ["python3"]')
for e in $todo; do
  log "importing into $e as $IMAGE"
  "$e" import "${CHANGES[@]}" "$TARBALL" "$IMAGE" >/dev/null
done
if [ -n "$SAVE" ]; then
  e=$(echo $ENGINES | awk '{print $1}')
  log "saving $IMAGE from $e to $SAVE"
  "$e" save -o "$SAVE" "$IMAGE"
fi
log "done"
