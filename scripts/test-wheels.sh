#!/usr/bin/env bash
# The wheels the tests' loopback package index serves (test/fixtures/packages/index-wheels.txt), from
# PyPI with pip, checked against their pinned SHA-256, cached in /var/cache/mcp-code-exec/test-wheels:
# a second run (and CI on a machine that has the cache) needs no network. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="${MCP_TEST_WHEELS:-/var/cache/mcp-code-exec/test-wheels}"
LIST=test/fixtures/packages/index-wheels.txt
mkdir -p "$DIR"
want=$(grep -c -- '--hash=' "$LIST")
have=$(find "$DIR" -maxdepth 1 -name '*.whl' | wc -l)
if [ "$have" -ge "$want" ]; then exit 0; fi
printf '[setup] downloading %s test wheels into %s\n' "$want" "$DIR" >&2
# The offline image's Python and platform: scikit-learn has a compiled wheel per Python and platform.
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary :all: --require-hashes \
  --python-version 3.11 --implementation cp --abi cp311 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
  -d "$DIR" -r "$LIST"
