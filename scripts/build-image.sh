#!/usr/bin/env bash
# Build the sandbox image from the recipe in image/ and import it into every engine found here.
#   batteries (default): Debian trixie's Python 3.13 and the 40 packages of image/python-top40.json,
#     from manylinux wheels; slim: the same Python and base, no packages.
# Every .deb is checked against image/debian.lock and every wheel against image/wheels.lock (sha256).
#
#   scripts/build-image.sh --tag NAME [--variant batteries|slim] [--offline] [--mirror URL] [--wheelhouse DIR]
#                          [--engines "podman docker"] [--force] [--save FILE] [--push REF] [--debian-unlocked]
#   scripts/build-image.sh --fetch DIR   (every pinned .deb and wheel into DIR/debian, a Debian mirror, and
#                                         DIR/wheels, a wheelhouse: what `--offline` needs on another machine)
#
# Debian packages come from the cache ($MCP_BRIDGE_IMAGE_CACHE/debs) when it has them all, else from
# --mirror (default deb.debian.org); wheels from the cache, else --wheelhouse DIR, else PyPI (the lock's
# URLs). --offline downloads nothing: a package whose wheels are not all at hand is left out, and said.
# A mirror that has moved on from the lock fails the build; --debian-unlocked takes what it has instead.
# Idempotent: an engine whose image carries this recipe's label is skipped, and the root filesystem is
# cached as a tarball named after the recipe (the digest of these files), so a changed recipe rebuilds.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RECIPE_DIR=$HERE/image
# shellcheck source=../image/recipe.sh
. "$RECIPE_DIR/recipe.sh"
IMAGE=${MCP_BRIDGE_OFFLINE_IMAGE:-}
CACHE=${MCP_BRIDGE_IMAGE_CACHE:-/var/cache/mcp-code-exec}
MIRROR=${DEBIAN_MIRROR:-}
VARIANT=batteries ENGINES="" FORCE=0 SAVE="" PUSH="" OFFLINE=0 WHEELHOUSE="" UNLOCKED=0 FETCH=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) IMAGE=$2; shift ;;
    --variant) VARIANT=$2; shift ;;
    --offline) OFFLINE=1 ;;
    --mirror) MIRROR=$2; shift ;;
    --wheelhouse) WHEELHOUSE=$2; shift ;;
    --engines) ENGINES=$2; shift ;;
    --force) FORCE=1 ;;
    --save) SAVE=$2; shift ;;
    --push) PUSH=$2; shift ;;
    --debian-unlocked) UNLOCKED=1 ;;
    --fetch) FETCH=$2; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
log() { printf '[image] %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
case "$VARIANT" in batteries|slim) ;; *) die "unknown variant $VARIANT (batteries or slim)" ;; esac
[ -n "$IMAGE" ] || [ -n "$FETCH" ] || die "name the image: --tag NAME (mcp-code-exec image build names it for you)"
if [ -z "$ENGINES" ] && [ -z "$FETCH" ]; then
  for e in podman docker; do command -v "$e" >/dev/null 2>&1 && ENGINES="$ENGINES $e"; done
fi
. "$HERE/scripts/image-sources.sh"

FILES=("$HERE/scripts/build-image.sh" "$HERE/scripts/image-sources.sh" "$RECIPE_DIR/recipe.sh" "$RECIPE_DIR/debian.lock"
       "$RECIPE_DIR/python-top40.json" "$RECIPE_DIR/manifest.py" "$RECIPE_DIR/check.py")
recipe_of() { # variant → its digest (the slim image does not depend on the wheels)
  { cat "${FILES[@]}"; [ "$1" = batteries ] && cat "$RECIPE_DIR/wheels.lock"; echo "$1"; } | sha256sum | cut -c1-16
}
RECIPE=$(recipe_of "$VARIANT")
LABEL=io.github.mcp-code-exec.recipe

if [ -n "$FETCH" ]; then fetch_all "$FETCH"; exit 0; fi

image_recipe() { # engine → the recipe label of $IMAGE there, empty when absent or unlabelled
  "$1" image inspect --format "{{ index .Config.Labels \"$LABEL\" }}" "$IMAGE" 2>/dev/null || true
}
image_id() { "$1" image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true; }

# What this build installs: every package of the list whose wheels are all at hand (all of them unless
# --offline finds some missing). The label says when some were left out or Debian was not the lock's.
SELECTED="" LEFT_OUT=""
[ "$VARIANT" = batteries ] && select_wheels
WANT=$RECIPE
[ -n "$LEFT_OUT" ] && WANT="$RECIPE-without-$(echo "$LEFT_OUT" | sha256sum | cut -c1-8)"
[ "$UNLOCKED" = 1 ] && WANT="$WANT-debian-unlocked"
SLIM_WANT=$(recipe_of slim)
[ "$UNLOCKED" = 1 ] && SLIM_WANT="$SLIM_WANT-debian-unlocked"

todo=""
for e in $ENGINES; do
  have=$(image_recipe "$e")
  if [ "$FORCE" = 1 ] || [ "$have" != "$WANT" ]; then
    [ -n "$(image_id "$e")" ] && [ "$FORCE" = 0 ] && log "$e has $IMAGE from another recipe (${have:-none}); rebuilding for $WANT"
    todo="$todo $e"
  fi
done
if [ -z "$todo" ] && [ -z "$SAVE" ] && [ -z "$PUSH" ]; then log "$IMAGE (recipe $WANT) present in: $(echo $ENGINES)"; exit 0; fi

SITE=usr/local/lib/python3.13/dist-packages

# The root filesystem from the pinned Debian packages, Python's packages from the pinned wheels. The
# slim image is the batteries image's base, so building one also caches the other's root filesystem.
build_root() { # root
  local root=$1 p
  debian_source "$root"
  [ "$VARIANT" = batteries ] && fetch_wheels
  debian_root "$root"
  mkdir -p "$root/tmp/build" "$root$(dirname "$MANIFEST")"
  cp "$RECIPE_DIR"/{manifest.py,check.py,python-top40.json} "$root/tmp/build/"
  cp "$RECIPE_DIR/debian.lock" "$root$(dirname "$MANIFEST")/"
  log "removing apt, documentation and translations"
  in_root "$root" dpkg --purge "${PURGE[@]}" >/dev/null
  for p in "${DELETE[@]}"; do rm -rf "${root:?}/$p"; mkdir -p "$root/$p"; done
  find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
  chmod 1777 "$root/tmp"
  local slim="$CACHE/sandbox-slim-$SLIM_WANT.tar"
  if [ "$VARIANT" = slim ] || [ ! -s "$slim" ]; then finish "$root" slim "$(recipe_of slim)" 0 "$slim"; fi
  [ "$VARIANT" = batteries ] || return 0
  install_wheels "$root"
  cp "$RECIPE_DIR/wheels.lock" "$root$(dirname "$MANIFEST")/"
  prune "$root/$SITE"
  # The font cache goes where a read-only root can still read it (entrypoint/display.py copies it).
  mkdir -p "$root$MPLCONFIG"
  in_root "$root" env MPLCONFIGDIR="$MPLCONFIG" python3 -c 'import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot' \
    >/dev/null 2>&1 || log "warning: matplotlib font cache not pre-built"
  chmod -R a+rX "$root$MPLCONFIG"
  finish "$root" batteries "$RECIPE" "$(count_selected)" "$TARBALL"
}

# The manifest, the check, and the root filesystem as a tarball.
finish() { # root variant recipe expected tarball
  local root=$1 variant=$2 recipe=$3 expected=$4 tarball=$5
  in_root "$root" python3 -I /tmp/build/manifest.py "$recipe" "$variant" >"$root$MANIFEST"
  log "checking the $variant root filesystem"
  in_root "$root" env MPLCONFIGDIR=/tmp/mpl-check python3 -I -B /tmp/build/check.py /tmp/build/python-top40.json "$MANIFEST" "$expected" >&2 \
    || die "the check failed in the new root filesystem (see above)"
  rm -rf "$root/tmp/mpl-check"
  tar -C "$root" --numeric-owner --exclude=./tmp/build -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
  # Tarballs of this variant's other recipes would only waste disk space; none can be used again (one
  # of this recipe that left packages out, or took the mirror's Debian versions, stays beside it).
  find "$CACHE" -maxdepth 1 -name "sandbox-$variant-*.tar" ! -name "sandbox-$variant-$recipe*" -delete
  log "$variant rootfs: $(du -h "$tarball" | cut -f1) (recipe $recipe)"
}

TARBALL="$CACHE/sandbox-$VARIANT-$WANT.tar"
# Only an engine that lacks the image needs the root filesystem (--save and --push use the engine's copy).
if [ -n "$todo" ] && { [ "$FORCE" = 1 ] || [ ! -s "$TARBALL" ]; }; then
  command -v debootstrap >/dev/null || die "debootstrap missing: apt-get install debootstrap"
  mkdir -p "$CACHE"
  ROOT=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  trap 'remove_root "$ROOT"' EXIT
  build_root "$ROOT"
  remove_root "$ROOT"; trap - EXIT
fi

CHANGES=(-c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
         -c 'ENV LANG=C.UTF-8' -c 'ENV MPLBACKEND=Agg'
         -c "LABEL $LABEL=$WANT"
         -c "LABEL io.github.mcp-code-exec.variant=$VARIANT"
         -c "LABEL io.github.mcp-code-exec.manifest=$MANIFEST"
         -c 'LABEL org.opencontainers.image.source=https://github.com/mcp-code-exec/mcp-code-exec'
         -c "LABEL org.opencontainers.image.description=\"mcp-code-exec sandbox ($VARIANT): Python 3.13 on Debian $SUITE\""
         -c 'CMD ["python3"]')
for e in $todo; do
  old=$(image_id "$e")
  log "importing into $e as $IMAGE"
  "$e" import "${CHANGES[@]}" "$TARBALL" "$IMAGE" >/dev/null
  # The image this tag held before is garbage now; an engine refuses while a container still uses it.
  if [ -n "$old" ] && [ "$old" != "$(image_id "$e")" ]; then "$e" rmi "$old" >/dev/null 2>&1 || true; fi
done
first=$(echo $ENGINES | awk '{print $1}')
if [ -n "$SAVE" ]; then
  log "saving $IMAGE from $first to $SAVE"
  "$first" save -o "$SAVE" "$IMAGE"
fi
if [ -n "$PUSH" ]; then
  log "pushing $IMAGE from $first to $PUSH"
  if [ "$first" = podman ]; then podman push "$IMAGE" "$PUSH"; else docker tag "$IMAGE" "$PUSH" && docker push "$PUSH"; fi
fi
log "done"
