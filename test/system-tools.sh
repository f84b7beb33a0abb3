#!/usr/bin/env bash
# The system tools the tests drive, in one list for `npm test` (its pretest) and .ci/run.
# Missing ones are installed with apt-get when this runs as root on Debian (a fresh machine,
# CI); otherwise it names them and fails, since a test without its tool fails anyway.
#   chromium  the browser test (driven by puppeteer-core, which never downloads a browser)
#   python3   urllib as a challenge-first client; its pty module gives hash-password a terminal
#   curl      curl --anyauth as a challenge-first client
#   sqlite3   the backup commands of docs/operations.md (test/cli-users.test.ts)
#   openssl   throwaway certificates for the TLS tests and test/deploy.test.ts
#   nginx     deploy/nginx.conf: nginx -t, and nginx in front of the CLI (test/deploy.test.ts)
#   systemd   systemd-analyze verify/security on deploy/booking-search-server.service;
#             systemd-journald, systemd-cat and journalctl for test/cli-journal.test.ts
#   prometheus  Prometheus scrapes the admin listener, and its promtool lints /metrics
#             (test/admin.test.ts); installed without recommends
#   gnucash, python3-gnucash, libdbd-sqlite3
#             GnuCash writes a real SQLite book through its Python bindings
#             (fixtures/gnucash-book.py); about 400 MB and a minute, installed without recommends
set -euo pipefail
PATH="$PATH:/usr/sbin:/sbin"

missing=()
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
for tool in python3 curl sqlite3 openssl nginx; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
command -v systemd-analyze >/dev/null || missing+=(systemd)
# Debian's python3-gnucash is built for /usr/bin/python3, whatever python3 comes first on PATH.
lean=()
/usr/bin/python3 -c 'import gnucash' 2>/dev/null || lean+=(gnucash python3-gnucash)
dpkg -s libdbd-sqlite3 >/dev/null 2>&1 || lean+=(libdbd-sqlite3)
{ command -v prometheus >/dev/null && command -v promtool >/dev/null; } || lean+=(prometheus)
[ "${#missing[@]}" -eq 0 ] && [ "${#lean[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "Installing the system tools the tests need: ${missing[*]} ${lean[*]}"
  apt-get update -qq
  [ "${#missing[@]}" -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  [ "${#lean[@]}" -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${lean[@]}"
else
  echo "The tests need these Debian packages: ${missing[*]} ${lean[*]} (as root: apt-get install ${missing[*]} ${lean[*]})" >&2
  exit 1
fi
