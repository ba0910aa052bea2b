# Where scripts/build-image.sh gets the image's Debian packages and wheels, and how each is checked
# against the locks (sourced; uses its variables: RECIPE_DIR, CACHE, MIRROR, WHEELHOUSE, OFFLINE,
# UNLOCKED, SUITE, ARCH, INCLUDE). Nothing here trusts a mirror, a proxy or a wheelhouse: a file is
# used only when its sha256 is the lock's.

sha_ok() { [ "$(sha256sum <"$1" | cut -c1-64)" = "$2" ]; }
in_root() { local root=$1; shift; chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/tmp "$@"; }
# A build root and its work folder, gone; file systems debootstrap mounted in it (proc, sys) first,
# and never a file beyond them (--one-file-system).
remove_root() { # root
  awk -v r="$1/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do umount -l "$m" || true; done
  rm -rf --one-file-system "$1" "$1.work"
}
lock_lines() { grep -v '^#' "$RECIPE_DIR/$1"; }
deb_file() { echo "${1}_${2}_${3}.deb" | sed 's/:/%3a/g'; } # name version arch → debootstrap's file name

# --- wheels -------------------------------------------------------------------------------------------
declare -A LEFT=()
# Which packages of the list this build installs (SELECTED) and leaves out (LEFT_OUT): all, unless
# --offline finds a wheel in neither the cache nor the wheelhouse (then every package that needs it).
select_wheels() {
  local name version sha file url needed n
  while read -r name version sha file url needed; do
    [ -s "$CACHE/wheels/$file" ] || { [ -n "$WHEELHOUSE" ] && [ -s "$WHEELHOUSE/$file" ]; } || [ "$OFFLINE" = 0 ] && continue
    [ "$needed" = - ] && die "$file (pip, which installs the wheels) is in neither $CACHE/wheels nor the wheelhouse${WHEELHOUSE:+ $WHEELHOUSE}"
    for n in ${needed//,/ }; do LEFT[$n]=1; done
  done < <(lock_lines wheels.lock)
  LEFT_OUT="${!LEFT[*]}"
  SELECTED=$(lock_lines wheels.lock | awk '$6 != "-" { gsub(",", "\n", $6); print $6 }' | sort -u | grep -vxF -f <(printf '%s\n' "${!LEFT[@]}" "") || true)
  if [ -n "$LEFT_OUT" ]; then
    log "left out, for want of wheels (add them to the wheelhouse): $(printf '%s\n' "${!LEFT[@]}" | sort | tr '\n' ' ')"
  fi
}
count_selected() { if [ -n "$SELECTED" ]; then echo "$SELECTED" | wc -l; else echo 0; fi; }
wanted() { local n; for n in ${1//,/ }; do [ -n "${LEFT[$n]:-}" ] || return 0; done; return 1; }

# $CACHE/wheels/FILE, checked: from the cache, else the wheelhouse, else (online) its URL.
get_wheel() { # sha file url
  local sha=$1 file=$2 url=$3 dest=$CACHE/wheels/$2
  mkdir -p "$CACHE/wheels"
  if [ -s "$dest" ]; then sha_ok "$dest" "$sha" && return 0; log "cached $file does not match the lock: fetching it again"; rm -f "$dest"; fi
  if [ -n "$WHEELHOUSE" ] && [ -s "$WHEELHOUSE/$file" ]; then
    sha_ok "$WHEELHOUSE/$file" "$sha" || die "$WHEELHOUSE/$file does not match its sha256 in image/wheels.lock: a changed or damaged file; replace it (mcp-code-exec image fetch DIR) or delete it"
    cp "$WHEELHOUSE/$file" "$dest.part" && mv "$dest.part" "$dest"
    return 0
  fi
  [ "$OFFLINE" = 0 ] || die "$file is in neither $CACHE/wheels nor the wheelhouse"
  curl -fsSL --retry 3 -o "$dest.part" "$url" || die "could not download $url (no route to PyPI? build on a connected machine, or pass --offline --wheelhouse DIR)"
  sha_ok "$dest.part" "$sha" || { rm -f "$dest.part"; die "$url does not match its sha256 in image/wheels.lock: not used (a proxy that rewrites files, or a changed index)"; }
  mv "$dest.part" "$dest"
}

# Every wheel this build installs, checked, in the cache: before anything else, so a missing or
# changed file stops the build at once.
fetch_wheels() {
  local name version sha file url needed
  log "wheels: $(count_selected) packages of the list$([ "$OFFLINE" = 1 ] && echo " (offline: cache${WHEELHOUSE:+ and $WHEELHOUSE})")"
  while read -r name version sha file url needed; do
    [ "$needed" = - ] || wanted "$needed" || continue
    get_wheel "$sha" "$file" "$url"
  done < <(lock_lines wheels.lock)
}

install_wheels() { # root
  local root=$1 dir=$1/tmp/build/wheels name version sha file url needed pip="" n=0
  mkdir -p "$dir"
  : >"$root/tmp/build/requirements.txt"
  while read -r name version sha file url needed; do
    [ "$needed" = - ] || wanted "$needed" || continue
    ln -f "$CACHE/wheels/$file" "$dir/$file" 2>/dev/null || cp "$CACHE/wheels/$file" "$dir/$file"
    if [ "$needed" = - ]; then pip=$file; else echo "$name==$version --hash=sha256:$sha" >>"$root/tmp/build/requirements.txt"; n=$((n + 1)); fi
  done < <(lock_lines wheels.lock)
  log "installing $n wheels with ${pip%%-py3*} (no index, no dependencies resolved here, hashes required)"
  # pip checks every file against its hash again, inside the new root.
  in_root "$root" python3 "/tmp/build/wheels/$pip/pip" install --no-index --find-links /tmp/build/wheels --no-deps --require-hashes \
    --only-binary :all: --break-system-packages --root-user-action ignore --disable-pip-version-check --no-warn-script-location \
    --quiet -r /tmp/build/requirements.txt >&2 || die "pip could not install the wheels (see above)"
}

prune() { # site-packages folder
  local site=$1 before g p keep dup
  before=$(du -sm "$site" | cut -f1)
  for p in "${PRUNE_DIRS[@]}"; do find "$site" -type d -name "$p" -prune -exec rm -rf {} +; done
  for g in "${PRUNE_GLOBS[@]}"; do find "$site" -type f -name "$g" -delete; done
  (shopt -s nullglob; cd "$site" && for p in "${PRUNE_PATHS[@]}"; do eval "rm -rf $p"; done)
  # A wheel cannot hold symbolic links, so libfoo.so, libfoo.so.1 and libfoo.so.1.2 are three copies.
  find "$site" -type f -name '*.so*' -exec sha256sum {} + | sort | awk '$1 == last { print keep, $2; next } { last = $1; keep = $2 }' \
    | while read -r keep dup; do ln -f "$keep" "$dup"; done
  log "pruned tests, headers and pyarrow's network file systems: $before -> $(du -sm "$site" | cut -f1) MB"
}

# --- Debian -------------------------------------------------------------------------------------------
all_debs_cached() {
  local name version arch sha
  while read -r name version arch sha; do [ -s "$CACHE/debs/$(deb_file "$name" "$version" "$arch")" ] || return 1; done < <(lock_lines debian.lock)
}

# A Debian mirror holding exactly the locked packages (those of the cache), for debootstrap.
make_mirror() { # dir copy|link
  local dir=$1 how=$2 name version arch sha f rel=dists/$SUITE/main/binary-$ARCH
  mkdir -p "$dir/pool" "$dir/$rel"
  : >"$dir/$rel/Packages"
  while read -r name version arch sha; do
    f=$(deb_file "$name" "$version" "$arch")
    sha_ok "$CACHE/debs/$f" "$sha" || die "$CACHE/debs/$f does not match image/debian.lock: delete it and build again"
    if [ "$how" = link ]; then ln -f "$CACHE/debs/$f" "$dir/pool/$f" 2>/dev/null || cp "$CACHE/debs/$f" "$dir/pool/$f"; else cp "$CACHE/debs/$f" "$dir/pool/$f"; fi
    { dpkg-deb -f "$dir/pool/$f"; printf 'Filename: pool/%s\nSize: %s\nSHA256: %s\n\n' "$f" "$(stat -c %s "$dir/pool/$f")" "$sha"; } >>"$dir/$rel/Packages"
  done < <(lock_lines debian.lock)
  {
    printf 'Origin: mcp-code-exec\nLabel: the Debian packages of image/debian.lock\nSuite: %s\nCodename: %s\n' "$SUITE" "$SUITE"
    printf 'Architectures: %s\nComponents: main\nSHA256:\n %s %s main/binary-%s/Packages\n' "$ARCH" \
      "$(sha256sum <"$dir/$rel/Packages" | cut -c1-64)" "$(stat -c %s "$dir/$rel/Packages")" "$ARCH"
  } >"$dir/dists/$SUITE/Release"
}

signed() { # mirror URL → whether it has a signed Release
  case "$1" in
    file://*) [ -e "${1#file://}/dists/$SUITE/InRelease" ] || [ -e "${1#file://}/dists/$SUITE/Release.gpg" ] ;;
    *) curl -fsI "$1/dists/$SUITE/InRelease" >/dev/null 2>&1 || curl -fsI "$1/dists/$SUITE/Release.gpg" >/dev/null 2>&1 ;;
  esac
}

# Every .deb debootstrap chose must be the lock's, and every locked one must be there.
verify_debs() { # root
  local root=$1 pkg path f problems=() name version arch sha
  declare -A lock=() seen=()
  while read -r name version arch sha; do lock[$name]="$version $arch $sha"; done < <(lock_lines debian.lock)
  while read -r pkg path; do
    f=$root/$path
    seen[$pkg]=1
    local got
    got="$(dpkg-deb -f "$f" Version) $(dpkg-deb -f "$f" Architecture) $(sha256sum <"$f" | cut -c1-64)"
    if [ -z "${lock[$pkg]:-}" ]; then problems+=("$pkg ${got%% *}: not in the lock")
    elif [ "${lock[$pkg]}" != "$got" ]; then problems+=("$pkg: lock ${lock[$pkg]%% *}, mirror ${got%% *}$([ "${lock[$pkg]%% *}" = "${got%% *}" ] && echo " (same version, other file)")")
    fi
  done <"$root/debootstrap/debpaths"
  for pkg in "${!lock[@]}"; do [ -n "${seen[$pkg]:-}" ] || problems+=("$pkg: in the lock, not chosen from this mirror"); done
  [ ${#problems[@]} = 0 ] && return 0
  log "the Debian packages differ from image/debian.lock (the mirror has moved on, or is not Debian's):"
  printf '  %s\n' "${problems[@]:0:12}" >&2
  [ ${#problems[@]} -gt 12 ] && log "  ... and $((${#problems[@]} - 12)) more"
  die "fix: refresh the lock (scripts/lock-image.sh, then commit image/debian.lock); or use a mirror with the locked versions (--mirror file://DIR/debian from \`mcp-code-exec image fetch DIR\`); or build from this mirror's versions with --debian-unlocked"
}

# Where Debian's packages come from for the root at $1: the cache as a local mirror when it holds
# every locked package, else --mirror (default deb.debian.org). Sets DEB_SRC, DEB_INCLUDE, DEB_OPTS;
# fails at once when the mirror does not answer (before any wheel is downloaded).
debian_source() { # root
  local root=$1
  mkdir -p "$CACHE/debs"
  DEB_INCLUDE=$INCLUDE
  if [ "$UNLOCKED" = 0 ] && [ -z "$MIRROR" ] && all_debs_cached; then
    make_mirror "$root.work/mirror" link
    DEB_SRC=file://$root.work/mirror
    DEB_INCLUDE=$(lock_lines debian.lock | awk '{print $1}' | paste -sd,)
    DEB_OPTS=(--no-check-gpg)
    log "Debian $SUITE: $(lock_lines debian.lock | wc -l) packages from the cache"
    return 0
  fi
  if [ -z "$MIRROR" ]; then
    [ "$OFFLINE" = 1 ] && die "--offline needs a Debian mirror: --mirror URL (a local mirror, or file://DIR/debian from \`mcp-code-exec image fetch DIR\` on a connected machine)"
    MIRROR=http://deb.debian.org/debian
  fi
  DEB_SRC=$MIRROR
  DEB_OPTS=(--cache-dir="$CACHE/debs")
  log "Debian $SUITE from $DEB_SRC"
  case "$DEB_SRC" in
    file://*) [ -s "${DEB_SRC#file://}/dists/$SUITE/Release" ] || [ -s "${DEB_SRC#file://}/dists/$SUITE/InRelease" ] ;;
    *) curl -fsI "$DEB_SRC/dists/$SUITE/Release" >/dev/null 2>&1 || curl -fsI "$DEB_SRC/dists/$SUITE/InRelease" >/dev/null 2>&1 ;;
  esac || die "no Debian $SUITE at $DEB_SRC (dists/$SUITE/Release): check the URL and the network, or pass --mirror URL"
  if ! signed "$DEB_SRC"; then
    [ "$UNLOCKED" = 1 ] && die "$DEB_SRC has no signed Release for $SUITE, and --debian-unlocked has no lock to check its packages against"
    DEB_OPTS+=(--no-check-gpg) # every .deb is checked against the lock below instead
  fi
}

# Debian's base in root: debootstrap's first stage, the check of every .deb, then the second stage.
debian_root() { # root
  local root=$1 dl="$CACHE/debootstrap.log" m
  log "debootstrap (a few minutes)"
  debootstrap --foreign --variant=minbase --arch="$ARCH" --include="$DEB_INCLUDE" "${DEB_OPTS[@]}" "$SUITE" "$root" "$DEB_SRC" >"$dl" 2>&1 \
    || { tail -20 "$dl" >&2; die "debootstrap failed (log: $dl)"; }
  [ "$UNLOCKED" = 1 ] || verify_debs "$root"
  chroot "$root" /debootstrap/debootstrap --second-stage >>"$dl" 2>&1 || { tail -20 "$dl" >&2; die "debootstrap's second stage failed (log: $dl)"; }
  for m in proc sys; do if mountpoint -q "$root/$m"; then umount "$root/$m"; fi; done
  rm -rf "$root.work"
  if [ "$UNLOCKED" = 1 ]; then log "Debian packages NOT checked against the lock (--debian-unlocked)"; fi
}

# --fetch DIR: everything a build needs, checked, as DIR/debian (a mirror) and DIR/wheels.
fetch_all() { # dir
  local dir=$1 name version sha file url needed tmp
  mkdir -p "$dir/wheels" "$CACHE/debs"
  while read -r name version sha file url needed; do
    get_wheel "$sha" "$file" "$url"
    cp "$CACHE/wheels/$file" "$dir/wheels/$file"
  done < <(lock_lines wheels.lock)
  if ! all_debs_cached; then
    tmp=$(mktemp -d "$CACHE/fetch.XXXXXX")
    log "downloading Debian $SUITE from ${MIRROR:-http://deb.debian.org/debian}"
    debootstrap --download-only --variant=minbase --arch="$ARCH" --include="$INCLUDE" --cache-dir="$CACHE/debs" \
      "$SUITE" "$tmp" "${MIRROR:-http://deb.debian.org/debian}" >"$CACHE/debootstrap.log" 2>&1 \
      || { tail -20 "$CACHE/debootstrap.log" >&2; rm -rf "$tmp"; die "debootstrap could not download the packages"; }
    rm -rf "$tmp"
    all_debs_cached || die "the mirror does not have every package of image/debian.lock in its locked version: refresh the lock (scripts/lock-image.sh)"
  fi
  make_mirror "$dir/debian" copy
  log "$dir: $(ls "$dir/wheels" | wc -l) wheels and $(lock_lines debian.lock | wc -l) Debian packages ($(du -sh "$dir" | cut -f1))"
  log "on the air-gapped machine: mcp-code-exec image build --offline --mirror file://$dir/debian --wheelhouse $dir/wheels"
}
