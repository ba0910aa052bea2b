#!/bin/sh
# Install mcp-code-exec: download the release binary for this machine, verify it against the release's
# SHA256SUMS, and put it in ~/.local/bin.
#
#   curl -fsSL https://github.com/mcp-code-exec/mcp-code-exec/releases/latest/download/install.sh | sh
#   curl -fsSL .../install.sh | sh -s -- --dir /usr/local/bin --url https://example.com/mcp-code-exec/v0.1.0
#
# Options (or environment variables):
#   --url URL   (MCP_CODE_EXEC_RELEASE_URL)  where mcp-code-exec-<os>-<arch> and SHA256SUMS are
#   --dir DIR   (MCP_CODE_EXEC_INSTALL_DIR)  where to install (default ~/.local/bin)
# Tests may set MCP_CODE_EXEC_UNAME_S / MCP_CODE_EXEC_UNAME_M to stand in for `uname -s` / `uname -m`.
set -eu

DEFAULT_URL="https://github.com/mcp-code-exec/mcp-code-exec/releases/latest/download"
URL="${MCP_CODE_EXEC_RELEASE_URL:-$DEFAULT_URL}"
DIR="${MCP_CODE_EXEC_INSTALL_DIR:-${HOME:-}/.local/bin}"

say() { printf '%s\n' "$*" >&2; }
die() { printf 'mcp-code-exec install: error: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --url) [ $# -ge 2 ] || die "--url needs a value"; URL=$2; shift ;;
    --url=*) URL=${1#--url=} ;;
    --dir) [ $# -ge 2 ] || die "--dir needs a value"; DIR=$2; shift ;;
    --dir=*) DIR=${1#--dir=} ;;
    -h|--help) sed -n '2,12p' "$0" 2>/dev/null || say "usage: install.sh [--url URL] [--dir DIR]"; exit 0 ;;
    *) die "unknown option $1 (use --url URL or --dir DIR)" ;;
  esac
  shift
done
URL=${URL%/}
[ -n "$DIR" ] || die "no install directory: set HOME, or pass --dir DIR"

os_name=${MCP_CODE_EXEC_UNAME_S:-$(uname -s)}
arch_name=${MCP_CODE_EXEC_UNAME_M:-$(uname -m)}
case "$os_name" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) die "unsupported operating system \"$os_name\": release binaries exist for Linux and macOS (Darwin)" ;;
esac
case "$arch_name" in
  x86_64|amd64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) die "unsupported architecture \"$arch_name\": release binaries exist for x86_64/amd64 and aarch64/arm64" ;;
esac
# An x86_64 shell under Rosetta on Apple silicon: the native binary is the right one.
if [ "$os" = darwin ] && [ "$arch" = x64 ] && [ -z "${MCP_CODE_EXEC_UNAME_M:-}" ] \
  && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
  arch=arm64
fi
if [ "$os" = linux ] && { ls /lib/ld-musl-* >/dev/null 2>&1 || ldd --version 2>&1 | grep -qi musl; }; then
  die "this Linux uses musl libc (Alpine?), and the release binaries need glibc: use a glibc distribution, or run from source with bun"
fi
NAME="mcp-code-exec-$os-$arch"

if command -v curl >/dev/null 2>&1; then
  fetch() { curl -fsSL --retry 2 -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget -q -O "$2" "$1"; }
else
  die "neither curl nor wget is installed: install one of them and run this again"
fi
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | awk '{print $1}'; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | awk '{print $1}'; }
else
  die "neither sha256sum nor shasum is installed: cannot verify the download (install coreutils or perl)"
fi

TMP=$(mktemp -d 2>/dev/null || mktemp -d -t mcp-code-exec)
trap 'rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM

say "downloading $URL/$NAME"
fetch "$URL/$NAME" "$TMP/$NAME" || die "could not download $URL/$NAME: check the URL (--url or MCP_CODE_EXEC_RELEASE_URL) and your connection"
fetch "$URL/SHA256SUMS" "$TMP/SHA256SUMS" || die "could not download $URL/SHA256SUMS: refusing to install a binary that cannot be verified"

expected=$(awk -v f="$NAME" '$2 == f || $2 == "*" f { print $1; exit }' "$TMP/SHA256SUMS")
[ -n "$expected" ] || die "$URL/SHA256SUMS has no entry for $NAME: refusing to install a binary that cannot be verified; nothing was installed"
actual=$(sha256 "$TMP/$NAME")
if [ "$actual" != "$expected" ]; then
  die "checksum mismatch for $NAME: SHA256SUMS says $expected, the download is $actual. The file is corrupt or was tampered with; nothing was installed"
fi
say "sha256 verified: $actual"

mkdir -p "$DIR" || die "cannot create $DIR: pass --dir DIR (or set MCP_CODE_EXEC_INSTALL_DIR) to a folder you can write"
TARGET="$DIR/mcp-code-exec"
# Copy beside the target, then rename: a running mcp-code-exec is never overwritten in place.
if ! { cp "$TMP/$NAME" "$DIR/.mcp-code-exec.$$" && chmod 755 "$DIR/.mcp-code-exec.$$" && mv -f "$DIR/.mcp-code-exec.$$" "$TARGET"; }; then
  rm -f "$DIR/.mcp-code-exec.$$"
  die "cannot write $TARGET: pass --dir DIR to a folder you can write"
fi

if version=$("$TARGET" --version </dev/null 2>/dev/null | awk '{print $1}') && [ -n "$version" ]; then
  say "installed $version at $TARGET"
else
  say "installed $TARGET, but it does not run on this machine: check that $NAME is right for it"
fi
case ":${PATH:-}:" in
  *":$DIR:"*) ;;
  *) say "warning: $DIR is not on your PATH; add this line to your shell profile (~/.profile, ~/.bashrc or ~/.zshrc):"
     say "  export PATH=\"$DIR:\$PATH\"" ;;
esac

json() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
shq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
cc_env="" json_env=""
if [ -n "${MCP_BRIDGE_IMAGE:-}" ]; then
  cc_env=" -e $(shq "MCP_BRIDGE_IMAGE=$MCP_BRIDGE_IMAGE")"
  json_env=",
      \"env\": { \"MCP_BRIDGE_IMAGE\": \"$(json "$MCP_BRIDGE_IMAGE")\" }"
fi
cat <<EOF

Register it with your MCP client.

Claude Code:
  claude mcp add code-exec$cc_env -- $(shq "$TARGET")

Claude Desktop (claude_desktop_config.json), Cursor (~/.cursor/mcp.json) and most clients:
{
  "mcpServers": {
    "code-exec": {
      "command": "$(json "$TARGET")"$json_env
    }
  }
}

Other clients: $TARGET config snippet --client claude-desktop|claude-code|cursor|vscode
The sandbox image: $TARGET image pull (online), or see "Air-gapped machines" in the README.
EOF
