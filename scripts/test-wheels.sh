#!/usr/bin/env bash
# The wheels the tests' loopback package index serves (test/fixtures/packages/index-wheels.txt), from
# PyPI with pip, checked against their pinned SHA-256, cached in /var/cache/mcp-code-exec/test-wheels-cp313
# (for the sandbox image's Python; test-wheels held those of the older Python 3.11 image):
# a second run (and CI on a machine that has the cache) needs no network. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="${MCP_TEST_WHEELS:-/var/cache/mcp-code-exec/test-wheels-cp313}"
LIST=test/fixtures/packages/index-wheels.txt
mkdir -p "$DIR"
want=$(grep -c -- '--hash=' "$LIST")
# Every pinned file present (by its SHA-256), not just as many files: a changed list downloads again.
missing=$(comm -23 <(grep -o 'sha256:[0-9a-f]*' "$LIST" | cut -d: -f2 | sort) \
  <(find "$DIR" -maxdepth 1 -name '*.whl' -exec sha256sum {} + | cut -c1-64 | sort) | wc -l)
if [ "$missing" = 0 ]; then exit 0; fi
printf '[setup] downloading %s test wheels into %s\n' "$want" "$DIR" >&2
# The sandbox image's Python and platform: compiled wheels exist per Python and platform.
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary :all: --require-hashes \
  --python-version 3.13 --implementation cp --abi cp313 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_24_x86_64 \
  --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 --platform any \
  -d "$DIR" -r "$LIST"
