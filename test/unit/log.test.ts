// bin/base/log.ts: a value that did not come from this program, made fit for one log line.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { logText, logValue, MAX_LINE_CHARACTERS, MAX_LOGGED_CHARACTERS } from '../../bin/base/log.js';

test('logValue escapes what could break or forge a line, and leaves the rest as it is', () => {
  const cases: Array<[string, string]> = [
    ['bank-import', 'bank-import'],
    ['Bürobedarf 🧾', 'Bürobedarf 🧾'],
    ['a\nb', 'a\\nb'],
    ['a\r\nb\tc', 'a\\r\\nb\\tc'],
    ['\u001b[31mrot', '\\x1b[31mrot'],
    ['\u0000\u007f\u0085', '\\x00\\x7f\\x85'],
    ['zeile\u2028zwei\u2029', 'zeile\\u2028zwei\\u2029'],
    ['abc\u202edcba\u2066x\u2069', 'abc\\u202edcba\\u2066x\\u2069'],
    ['kasse\u200b', 'kasse\\u200b'],
    ['\ufeffkas\u00adse\u2060', '\\ufeffkas\\xadse\\u2060'],
    ['say "hi"', 'say \\"hi\\"'],
    ['C:\\kasse', 'C:\\\\kasse'],
    ['lone \ud800 high, lone \udc00 low', 'lone \\ud800 high, lone \\udc00 low'],
    ['', ''],
  ];
  for (const [value, expected] of cases) assert.equal(logValue(value), expected, JSON.stringify(value));
});

test('logValue bounds a value by code points, never cutting a character in two, and says how many were left out', () => {
  assert.equal(MAX_LOGGED_CHARACTERS, 100);
  assert.equal(logValue('x'.repeat(100)), 'x'.repeat(100));
  assert.equal(logValue('x'.repeat(101)), `${'x'.repeat(100)}…(+1)`);
  assert.equal(logValue('🧾'.repeat(150)), `${'🧾'.repeat(100)}…(+50)`);
  assert.equal(logValue('\n'.repeat(10), 4), '\\n\\n\\n\\n…(+6)');
  assert.equal(logValue('abcdef', 3), 'abc…(+3)');
});

test('logValue with quotes: false, for a whole line: the line keeps its own quotes and backslashes (check may print a command to paste), a newline or escape from the file is escaped', () => {
  const line = `error in GET /api/v1/buchungen: RangeError: booking id is not an integer: "A\n2026-11-24T08:00:00.000Z forged" \\ \u001b[2J`;
  assert.equal(
    logValue(line, MAX_LINE_CHARACTERS, { quotes: false }),
    'error in GET /api/v1/buchungen: RangeError: booking id is not an integer: "A\\n2026-11-24T08:00:00.000Z forged" \\ \\x1b[2J',
  );
  assert.equal(
    logValue('x'.repeat(MAX_LINE_CHARACTERS + 5), MAX_LINE_CHARACTERS, { quotes: false }).length,
    MAX_LINE_CHARACTERS + 5,
  );
});

test('logText, a line of the log: its own quotes kept, a backslash escaped, so that a name holding the four characters \\x0a reads otherwise than one holding a newline', () => {
  assert.equal(logText('say "hi" \\ \u001b[2J'), 'say "hi" \\\\ \\x1b[2J');
  assert.equal(
    logText('database /srv/a\\x0a2026-11-24T08:00:00.000Z b'),
    'database /srv/a\\\\x0a2026-11-24T08:00:00.000Z b',
  );
  assert.equal(logText('database /srv/a\n2026-11-24T08:00:00.000Z b'), 'database /srv/a\\n2026-11-24T08:00:00.000Z b');
  // On Windows a backslash is every path's separator, and no path holds a control character.
  assert.equal(
    logText('listening on pipe:\\\\.\\pipe\\kasse and C:\\ProgramData\\x\n', 'win32'),
    'listening on pipe:\\\\.\\pipe\\kasse and C:\\ProgramData\\x\\n',
  );
});
