// A reload with --workers said once for the service (bin/cluster/reload-workers.ts): the
// lines of every worker when all said the same, else one line naming what each did. The
// CLI's own, with two workers, is test/cli-workers.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Channel } from '../../bin/base/index.js';
import { inTurn } from '../../bin/base/signals.js';
import { reloadWorkers, type SaidLine, sayOnce } from '../../bin/cluster/reload-workers.js';

const APPLIED: SaidLine[] = [
  { text: 'SIGHUP: configuration re-read from books.conf: 2 books, nothing changed', level: 'notice' },
  { text: 'SIGHUP: prot changed; that takes effect at the next start', level: 'warning' },
];
const REFUSED: SaidLine[] = [
  { text: "SIGHUP: keeping the running configuration: books.conf:3: user 'webr' is unknown", level: 'warning' },
];

test('workers that said the same: their lines, once', () => {
  assert.deepEqual(
    sayOnce('SIGHUP', [
      { pid: 11, lines: APPLIED },
      { pid: 12, lines: APPLIED },
    ]),
    APPLIED,
  );
});

test('a reload the primary asked for (a replacement serves): its lines name that cause, not a signal nobody sent', () => {
  const cause = 'after worker 23963 started';
  const warned = { text: 'warning: credentials file c is readable by every user', level: 'warning' } as const;
  assert.deepEqual(
    sayOnce(
      'SIGHUP',
      [
        { pid: 11, lines: [...APPLIED, warned] },
        { pid: 12, lines: [...APPLIED, warned] },
      ],
      cause,
    ),
    [
      { text: `${cause}: configuration re-read from books.conf: 2 books, nothing changed`, level: 'notice' },
      { text: `${cause}: prot changed; that takes effect at the next start`, level: 'warning' },
      warned,
    ],
  );
  assert.deepEqual(
    sayOnce(
      'SIGHUP',
      [
        { pid: 11, lines: APPLIED },
        { pid: 12, lines: REFUSED },
      ],
      cause,
    ),
    [
      {
        text: `${cause}: the workers did not all do the same: worker 11: configuration re-read from books.conf: 2 books, nothing changed; prot changed; that takes effect at the next start | worker 12: keeping the running configuration: books.conf:3: user 'webr' is unknown`,
        level: 'warning',
      },
    ],
  );
});

test('no worker that serves: nothing to say (the workers started for them say their start)', () => {
  assert.deepEqual(sayOnce('SIGHUP', []), []);
});

test('workers that disagree: one line that says what each group did, at the gravest level', () => {
  assert.deepEqual(
    sayOnce('SIGHUP', [
      { pid: 11, lines: APPLIED },
      { pid: 12, lines: REFUSED },
      { pid: 13, lines: APPLIED },
    ]),
    [
      {
        text: "SIGHUP: the workers did not all do the same: workers 11, 13: configuration re-read from books.conf: 2 books, nothing changed; prot changed; that takes effect at the next start | worker 12: keeping the running configuration: books.conf:3: user 'webr' is unknown",
        level: 'warning',
      },
    ],
  );
  assert.deepEqual(
    sayOnce('SIGHUP', [
      { pid: 11, lines: REFUSED },
      { pid: 12, failed: 'no answer within 300 s' },
    ]),
    [
      {
        text: "SIGHUP: the workers did not all do the same: worker 11: keeping the running configuration: books.conf:3: user 'webr' is unknown | worker 12: no answer (no answer within 300 s)",
        level: 'error',
      },
    ],
  );
});

test('a worker that ended during the reload is left out: its end is said, and its replacement reads the files', () => {
  assert.deepEqual(
    sayOnce('SIGHUP', [
      { pid: 11, lines: APPLIED },
      { pid: 12, failed: 'worker 12 ended' },
    ]),
    sayOnce('SIGHUP', [{ pid: 11, lines: APPLIED }]),
  );
  assert.deepEqual(sayOnce('SIGHUP', [{ pid: 12, failed: 'worker 12 ended' }]), []);
});

test('one reload at a time: calls while one runs share the next run, with the last call arguments', async () => {
  const runs: string[] = [];
  let release: () => void = () => {};
  const turn = inTurn(async (name: string) => {
    runs.push(name);
    if (runs.length === 1) await new Promise<void>((resolve) => (release = resolve));
    return `ran ${name}`;
  });
  const first = turn('a');
  const second = turn('b');
  const third = turn('c');
  release();
  assert.deepEqual(await Promise.all([first, second, third]), ['ran a', 'ran c', 'ran c']);
  assert.deepEqual(runs, ['a', 'c']);
});

// A credentials file rewritten while the workers read it: each applied what it read, and one
// went on letting in a user the file no longer held, until the next reload.
test('workers that disagree are asked once more, and the second round is said as such; workers that agree, once', async (t) => {
  const asked: number[] = [];
  const worker = (pid: number, rounds: SaidLine[][]) => ({
    pid,
    channel: {
      request: async () => {
        asked.push(pid);
        return rounds.shift() ?? APPLIED;
      },
    } as unknown as Channel,
  });
  const written: string[] = [];
  t.mock.method(process.stderr, 'write', (text: string) => written.push(text) > 0);
  await reloadWorkers([worker(11, [APPLIED]), worker(12, [REFUSED])], 'SIGHUP');
  assert.deepEqual(asked, [11, 12, 11, 12]);
  assert.equal(written.length, 3, written.join(''));
  assert.match(written[0] ?? '', /SIGHUP: the workers did not all do the same: worker 11: .* \| worker 12: /);
  assert.match(written[1] ?? '', /SIGHUP \(again: the workers did not all read the same\): configuration re-read/);
  asked.length = 0;
  await reloadWorkers([worker(11, [APPLIED]), worker(12, [APPLIED])], 'SIGHUP');
  assert.deepEqual(asked, [11, 12]);
});
