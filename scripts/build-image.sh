#!/usr/bin/env bash
# Build the offline sandbox image from Debian packages (no image registry needed) and import it into
# every engine found here (podman, docker). Python 3.11 with numpy (OpenBLAS), pandas, matplotlib,
# Pillow, scipy and lxml; no compiler, no headers.
#
#   scripts/build-image.sh [--force] [--engines "podman docker"] [--mirror URL] [--save FILE]
#
# Idempotent: engines whose image was built from this recipe are skipped. The recipe is this file: its
# digest labels the image and names the root filesystem tarball cached in $MCP_BRIDGE_IMAGE_CACHE
# (default /var/cache/mcp-code-exec), so an image or tarball from an older recipe is rebuilt, never reused.
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
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
log() { printf '[image] %s\n' "$*" >&2; }
if [ -z "$ENGINES" ]; then
  for e in podman docker; do command -v "$e" >/dev/null 2>&1 && ENGINES="$ENGINES $e"; done
fi

# --- The recipe -----------------------------------------------------------------------------------
# What the sandbox offers. debootstrap follows Depends through the first alternative of each, so these
# also unpack what Debian needs to BUILD them: python3-fonttools → python3-scipy → python3-pythran →
# g++, libboost-dev, python3-dev, libopenblas-dev; python3-matplotlib → python3-pil.imagetk → Tk/X11;
# mime-support → perl; python3-fonttools → python3-sympy, unicode-data. PURGE removes those again.
INCLUDE=python3,python3-numpy,python3-pandas,python3-matplotlib,python3-pil,python3-scipy,python3-lxml,ca-certificates
# Purged with `dpkg --force-depends`: nothing the sandbox runs imports, loads or executes them (the
# feature check below and test/e2e/image-features.test.ts prove the rest still works). The image's
# package database is left with these dependencies unmet; extend it by rebuilding, not with apt.
PURGE=(
  # compilers, binutils and their runtime support libraries (pythran's g++)
  g++ g++-12 gcc gcc-12 cpp cpp-12 binutils binutils-common binutils-x86-64-linux-gnu
  binutils-aarch64-linux-gnu libbinutils
  libctf0 libctf-nobfd0 libgprofng0 libjansson4 libisl23 libmpc3 libmpfr6 libcc1-0 libgcc-12-dev
  libstdc++-12-dev libasan8 libtsan2 liblsan0 libubsan1 libitm1 libatomic1
  # C library headers
  libc6-dev libc-dev-bin linux-libc-dev libcrypt-dev libnsl-dev libtirpc-dev rpcsvc-proto
  # headers and static libraries: boost, OpenBLAS (its shared library stays), xsimd, zlib, expat, Python
  libboost1.74-dev libboost-dev libopenblas-dev libopenblas-pthread-dev libxsimd-dev zlib1g-dev
  libexpat1-dev libpython3.11-dev libpython3-dev libpython3-all-dev python3.11-dev python3-dev
  python3-all-dev python3-all libjs-sphinxdoc libjs-underscore
  # libpython3.11.so, only for programs that embed Python (python3.11 itself is linked statically)
  libpython3.11
  # reference BLAS and LAPACK: numpy and scipy load OpenBLAS through the libblas.so.3/liblapack.so.3
  # alternatives, which OpenBLAS's higher priority already selects
  libblas3 liblapack3
  # pythran, scipy's build-time compiler
  python3-pythran python3-beniget python3-gast python3-ply
  # Tk and X11 for matplotlib's TkAgg and Pillow's ImageTk (no display in a sandbox; libxcb1 stays for Pillow)
  python3-tk libtk8.6 libtcl8.6 tk8.6-blt2.5 blt python3-pil.imagetk libxft2 libxss1 libxext6
  libxrender1 x11-common libx11-6 libx11-data libfontconfig1 fontconfig-config
  # WebAgg's JavaScript (needs tornado and a browser)
  libjs-jquery libjs-jquery-ui
  # perl, pulled by mailcap (perl-base, which dpkg needs, stays)
  perl libperl5.36 perl-modules-5.36 libgdbm-compat4 libgdbm6
  # fonttools' optional extras matplotlib never imports: sympy (120 MB with byte-code), Unicode tables
  python3-sympy python3-mpmath unicode-data
)
# Deleted after install: documentation, translations, test suites, package caches. Byte-code stays
# (the root is read-only at run time, so imports could not write it).
DELETE=(usr/share/doc usr/share/man usr/share/info usr/share/lintian usr/share/bash-completion
        var/cache/apt var/lib/apt/lists var/log)
# Paths the check below insists are gone, so a recipe change cannot bring the build chain back unnoticed.
ABSENT=(usr/bin/gcc usr/bin/g++ usr/bin/cc usr/bin/c++ usr/bin/ld usr/share/perl/5.36
        usr/include/python3.11/Python.h usr/include/boost usr/include/stdio.h usr/lib/python3/dist-packages/pythran)
# --------------------------------------------------------------------------------------------------

RECIPE=$(sha256sum <"${BASH_SOURCE[0]}" | cut -c1-16)
LABEL=io.github.mcp-code-exec.recipe

image_recipe() { # engine → the recipe label of $IMAGE there, empty when absent or unlabelled
  "$1" image inspect --format "{{ index .Config.Labels \"$LABEL\" }}" "$IMAGE" 2>/dev/null || true
}
image_id() { "$1" image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true; }

todo=""
for e in $ENGINES; do
  have=$(image_recipe "$e")
  if [ "$FORCE" = 1 ] || [ "$have" != "$RECIPE" ]; then
    [ -n "$(image_id "$e")" ] && [ "$FORCE" = 0 ] && log "$e has $IMAGE from another recipe (${have:-none}); rebuilding for $RECIPE"
    todo="$todo $e"
  fi
done
if [ -z "$todo" ] && [ -z "$SAVE" ]; then log "$IMAGE (recipe $RECIPE) present in: $(echo $ENGINES)"; exit 0; fi

# The build-time proof that every feature works (test/e2e/image-features.test.ts checks them again
# through the bridge, in a real sandbox).
read -r -d '' FEATURE_CHECK <<'PY' || true
import asyncio, ctypes, ctypes.util, io, json, sqlite3, ssl, zoneinfo, bz2, lzma, zlib
import numpy as np, pandas as pd, scipy.stats, scipy.optimize, lxml.etree
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from PIL import Image
a = np.arange(12.0).reshape(3, 4)
assert float((a @ a.T).trace()) == 506.0 and abs(np.linalg.det(np.eye(3) * 2) - 8) < 1e-9
df = pd.read_csv(io.StringIO("x,y\n1,2\n3,4\n"))
assert int(df.y.sum()) == 6 and "x,y" in df.to_csv(index=False)
assert abs(scipy.optimize.brentq(lambda x: x * x - 2, 0, 2) - 2 ** 0.5) < 1e-9
assert lxml.etree.fromstring("<a><b>1</b></a>").findtext("b") == "1"
fig, ax = plt.subplots()
ax.plot([1, 2, 3])
ax.set_title("font check")
buf = io.BytesIO()
fig.savefig(buf, format="png")
assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
for fmt in ("PNG", "JPEG", "WEBP", "TIFF"):
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 10, 10)).save(out, fmt)
    assert Image.open(io.BytesIO(out.getvalue())).size == (8, 8)
assert ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").abs(-3) == 3
assert asyncio.run(asyncio.sleep(0, "ok")) == "ok"
assert sqlite3.connect(":memory:").execute("select 1").fetchone() == (1,)
assert json.loads(json.dumps({"a": [1]})) == {"a": [1]}
assert zoneinfo.ZoneInfo("Europe/Paris") and ssl.create_default_context()
print("features ok")
PY

# Purge, delete, check the absent paths, pre-build matplotlib's font cache, run the feature check.
slim() { # root
  local root=$1 installed purge p
  installed=$(chroot "$root" dpkg-query -W -f '${Package}\n')
  purge=$(printf '%s\n' "${PURGE[@]}" | grep -Fxf <(printf '%s\n' "$installed") || true)
  log "purging $(echo $purge | wc -w) build-only packages"
  # shellcheck disable=SC2086
  chroot "$root" dpkg --purge --force-depends $purge >>"$CACHE/debootstrap.log" 2>&1 \
    || { tail -20 "$CACHE/debootstrap.log" >&2; return 1; }
  for p in "${DELETE[@]}"; do rm -rf "${root:?}/$p"; mkdir -p "$root/$p"; done
  find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
  find "$root/usr/lib/python3/dist-packages" -type d -name tests -prune -exec rm -rf {} +
  for p in "${ABSENT[@]}"; do
    if [ -e "$root/$p" ] || [ -L "$root/$p" ]; then log "recipe error: /$p is still in the image"; return 1; fi
  done
  # The font cache goes where a read-only root can still read it (entrypoint/display.py copies it).
  mkdir -p "$root/opt/mplconfig"
  chroot "$root" env MPLCONFIGDIR=/opt/mplconfig python3 -c 'import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot' \
    >/dev/null 2>&1 || log "warning: matplotlib font cache not pre-built"
  chmod -R a+rX "$root/opt/mplconfig"
  chroot "$root" env -i PATH=/usr/bin:/bin LANG=C.UTF-8 MPLCONFIGDIR=/tmp/mpl-check HOME=/tmp python3 -B -c "$FEATURE_CHECK" >&2 \
    || { log "feature check failed in the new root filesystem (see above)"; return 1; }
  rm -rf "$root/tmp/mpl-check"
}

TARBALL="$CACHE/sandbox-rootfs-$RECIPE.tar"
if [ "$FORCE" = 1 ] || [ ! -s "$TARBALL" ]; then
  command -v debootstrap >/dev/null || { log "debootstrap missing: apt-get install debootstrap"; exit 1; }
  mkdir -p "$CACHE"
  ROOT=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  trap 'rm -rf "$ROOT"' EXIT
  log "debootstrap bookworm from $MIRROR (a few minutes)"
  debootstrap --variant=minbase --include="$INCLUDE" bookworm "$ROOT" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
    || { tail -20 "$CACHE/debootstrap.log" >&2; exit 1; }
  slim "$ROOT"
  tar -C "$ROOT" --numeric-owner -cf "$TARBALL.tmp" . && mv "$TARBALL.tmp" "$TARBALL"
  rm -rf "$ROOT"; trap - EXIT
  # Tarballs of other recipes would only waste disk space; none can be used again.
  find "$CACHE" -maxdepth 1 -name 'sandbox-rootfs*.tar' ! -name "${TARBALL##*/}" -delete
  log "rootfs: $(du -h "$TARBALL" | cut -f1) (recipe $RECIPE)"
fi

CHANGES=(-c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
         -c 'ENV LANG=C.UTF-8' -c 'ENV MPLBACKEND=Agg'
         -c "LABEL $LABEL=$RECIPE"
         -c 'CMD ["python3"]')
for e in $todo; do
  old=$(image_id "$e")
  log "importing into $e as $IMAGE"
  "$e" import "${CHANGES[@]}" "$TARBALL" "$IMAGE" >/dev/null
  # The image this tag held before is garbage now; an engine refuses while a container still uses it.
  if [ -n "$old" ] && [ "$old" != "$(image_id "$e")" ]; then "$e" rmi "$old" >/dev/null 2>&1 || true; fi
done
if [ -n "$SAVE" ]; then
  e=$(echo $ENGINES | awk '{print $1}')
  log "saving $IMAGE from $e to $SAVE"
  "$e" save -o "$SAVE" "$IMAGE"
fi
log "done"
