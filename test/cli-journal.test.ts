// The command's lines in journald, as under systemd: a real systemd-journald, started in a
// mount namespace of its own (its sockets and its journal on tmpfs, nothing of the
// machine's touched), the command's stdout and stderr connected to it as systemd connects a
// service's (JOURNAL_STREAM naming that stream), and journalctl reading what it kept.
// Needs root (for the namespace), as CI runs; without it the test fails, saying so.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { BIN, cleanEnv } from './support/cli-helpers.js';

// Inside the namespace: journald on fresh tmpfs mounts; the command under systemd-cat, with
// JOURNAL_STREAM set to its stdout's device and inode as systemd sets it, on loopback, with
// a variable that names no setting (its warning); one request with a wrong password; a
// second command that cannot start (the port is taken); then what journalctl shows, all of
// it and with -p warning. Each command replaces the subshell it runs in (exec), so that
// the process stopped is the command itself, not a shell that would leave it running.
const SCRIPT = String.raw`
set -euo pipefail
for dir in /run/systemd /run/log; do
  [ -d "$dir" ] || mkdir -p "$dir"
  mount -t tmpfs tmpfs "$dir"
done
[ -d /var/log/journal ] && mount -t tmpfs tmpfs /var/log/journal
mkdir -p /run/systemd/journal
/lib/systemd/systemd-journald >/dev/null 2>&1 &
journald=$!
trap 'kill $journald' EXIT
for _ in $(seq 200); do [ -S /run/systemd/journal/stdout ] && break; sleep 0.05; done

serve() { # TAG ARGS…: the command as a service with its output in the journal
  local tag=$1; shift
  exec systemd-cat -t "$tag" bash -c 'export JOURNAL_STREAM=$(stat -L -c %d:%i /proc/$$/fd/1); exec "$0" "$@"' \
    "$NODE" "$BIN" "$@"
}
for format in text json; do
  tag="bss-$format"
  (BOOKING_SEARCH_SOKET=1 serve "$tag" --demo --port 0 --log-format "$format") &
  pid=$!
  port=
  for _ in $(seq 200); do
    port=$(journalctl --no-pager -t "$tag" -o cat | grep -o 'listening on http://127\.0\.0\.1:[0-9]*' | grep -o '[0-9]*$' || true)
    [ -n "$port" ] && break
    sleep 0.05
  done
  curl -s -o /dev/null -u demo:falsch "http://127.0.0.1:$port/api/v1/status"
  (serve "$tag" --demo --port "$port" --log-format "$format") || true
  kill -TERM "$pid"
  wait "$pid" || true
  ! kill -0 "$pid" 2>/dev/null
  sleep 0.3
  echo "== $format all"
  journalctl --no-pager -t "$tag" -o json --output-fields=PRIORITY,MESSAGE | sort -t: -k1
  echo "== $format warning"
  journalctl --no-pager -t "$tag" -p warning -o cat
done
`;

interface Entry {
  PRIORITY: string;
  MESSAGE: string;
}

test('under journald, every line carries its priority: journalctl -p warning shows the warning and the failure to start, not the greeting or the access lines; JSON lines carry a level', (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to start journald in a mount namespace of its own (CI runs as root)');
  const result = spawnSync('unshare', ['--mount', '--fork', 'bash', '-c', SCRIPT], {
    encoding: 'utf8',
    env: { ...cleanEnv(), NODE: process.execPath, BIN },
    timeout: 60_000,
  });
  assert.equal(result.status, 0, result.stderr);
  const sections = new Map<string, string[]>();
  let current = '';
  for (const line of result.stdout.split('\n')) {
    if (line.startsWith('== ')) {
      current = line.slice(3);
      sections.set(current, []);
    } else if (line !== '') sections.get(current)?.push(line);
  }
  t.diagnostic(result.stdout);
  for (const format of ['text', 'json'] as const) {
    const all = (sections.get(`${format} all`) ?? []).map((line) => JSON.parse(line) as Entry);
    const priorityOf = (pattern: RegExp): string[] =>
      all.filter((entry) => pattern.test(entry.MESSAGE)).map((entry) => entry.PRIORITY);
    // syslog priorities: 3 error, 4 warning, 6 info.
    assert.deepEqual(priorityOf(/listening on http:\/\/127\.0\.0\.1:/), ['6'], 'the greeting: info');
    assert.deepEqual(priorityOf(/Demo credentials:/), ['6']);
    assert.deepEqual(priorityOf(/warning: the variable BOOKING_SEARCH_SOKET names no setting/), ['4']);
    assert.deepEqual(priorityOf(/is already in use/), ['3'], 'the failure to start: error');
    assert.deepEqual(priorityOf(/\/api\/v1\/status/), ['6'], 'the access line: info');
    assert.ok(
      all.every((entry) => !entry.MESSAGE.startsWith('<')),
      'journald took every prefix off',
    );
    if (format === 'json') {
      for (const entry of all) {
        const line = JSON.parse(entry.MESSAGE) as { level: string };
        assert.equal(line.level, { '3': 'error', '4': 'warning', '5': 'notice', '6': 'info' }[entry.PRIORITY]);
      }
    }
    const warnings = sections.get(`${format} warning`) ?? [];
    assert.equal(warnings.length, 2, warnings.join('\n'));
    assert.ok(
      warnings.every((line) => /warning: the variable BOOKING_SEARCH_SOKET|is already in use/.test(line)),
      warnings.join('\n'),
    );
  }
});
