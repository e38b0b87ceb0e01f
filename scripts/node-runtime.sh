#!/usr/bin/env bash
# Prints the folder of an official Node.js build of the given major version, installing it first
# when the cache lacks one. The builds come from the npm registry (the node-<os>-<cpu> packages
# carry the same binaries and headers as nodejs.org), so any machine that can `npm ci` can get them.
# The folder holds bin/node and include/node: with npm_config_nodedir pointing at it, node-gyp
# builds native modules (better-sqlite3, re2) against those headers instead of downloading them.
#
#   scripts/node-runtime.sh 22          # -> ~/.cache/plainbase-node/22.x.y
#   node22="$(scripts/node-runtime.sh 22)"
#   PATH="$node22/bin:$PATH" npm_config_nodedir="$node22" npm ci
#
# The newest cached build of that major is reused; PLAINBASE_NODE_REFRESH=1 looks for a newer one.
# Messages go to stderr, so stdout is only the folder.
set -euo pipefail

major="${1:-}"
case "$major" in
  '' | *[!0-9]*)
    echo "usage: $0 <major version, e.g. 22 or 24>" >&2
    exit 2
    ;;
esac

cache="${PLAINBASE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/plainbase-node}"

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "node-runtime: no Node.js package for $(uname -s); install Node.js $major yourself" >&2; exit 1 ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) cpu=x64 ;;
  aarch64 | arm64) cpu=arm64 ;;
  *) echo "node-runtime: no Node.js package for $(uname -m); install Node.js $major yourself" >&2; exit 1 ;;
esac
package="node-$os-$cpu"

complete() {
  [ -x "$1/bin/node" ] && [ -f "$1/include/node/node.h" ] && [ -f "$1/include/node/common.gypi" ]
}

newest_cached() {
  local found
  found="$(ls -d "$cache/$major".* 2>/dev/null | sort -V | tail -n 1)"
  if [ -n "$found" ] && complete "$found"; then echo "$found"; fi
}

if [ "${PLAINBASE_NODE_REFRESH:-}" != 1 ]; then
  cached="$(newest_cached)"
  if [ -n "$cached" ]; then
    echo "$cached"
    exit 0
  fi
fi

command -v npm >/dev/null || { echo "node-runtime: npm is needed to fetch $package@$major" >&2; exit 1; }
mkdir -p "$cache"
work="$(mktemp -d "$cache/.download-XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "node-runtime: fetching $package@$major from the npm registry into $cache" >&2
(cd "$work" && npm pack "$package@$major" --silent >/dev/null)
mkdir "$work/unpacked"
tar -xzf "$work"/"$package"-*.tgz -C "$work/unpacked" --strip-components=1
version="$("$work/unpacked/bin/node" -p 'process.versions.node')"
complete "$work/unpacked" || { echo "node-runtime: $package@$version lacks bin/node or include/node" >&2; exit 1; }

target="$cache/$version"
if complete "$target"; then
  echo "node-runtime: Node.js $version was already cached" >&2
else
  rm -rf "$target"
  # A rename within one folder: another run never sees a half-unpacked build.
  mv "$work/unpacked" "$target"
  echo "node-runtime: Node.js $version is in $target" >&2
fi
echo "$target"
