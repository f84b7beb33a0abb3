// The commands this program prints for the admin to paste: each word reaches the command
// whole, as a POSIX shell reads it back (on Windows, as cmd and PowerShell do).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { shellWord } from '../../bin/base/shell.js';

const AWKWARD = [
  '/srv/gkasse2/Kasse 2026.sqlite',
  "/srv/Müller's Kasse.sqlite",
  '/srv/$HOME/`id`/$(id).sqlite',
  '/srv/a"b\\c;d&e|f<g>h*?[x]{y}!#~.sqlite',
  '~/kasse.sqlite',
  '/srv/two\nlines.sqlite',
  "'",
  '',
];

test('shellWord: a word a POSIX shell reads back as one argument, exactly', () => {
  const script = `printf '%s\\0' ${AWKWARD.map((word) => shellWord(word)).join(' ')}`;
  const read = execFileSync('sh', ['-c', script], { encoding: 'utf8' }).split('\0').slice(0, -1);
  assert.deepEqual(read, AWKWARD);
});

test('shellWord: a plain path or name stays as it is written; any other in single quotes', () => {
  for (const word of ['/srv/kasse.sqlite', 'www-data', '1000', '/var/lib/a_b/c+d@e,f=g:h%i.sqlite'])
    assert.equal(shellWord(word), word);
  assert.equal(shellWord('/srv/gkasse2/Kasse 2026.sqlite'), "'/srv/gkasse2/Kasse 2026.sqlite'");
  assert.equal(shellWord("it's"), "'it'\\''s'");
});

test('shellWord on Windows: a plain path as it is; any other in double quotes, which cmd and PowerShell both read as one argument', () => {
  assert.equal(shellWord('C:\\Users\\me\\Kasse.mmb', 'win32'), 'C:\\Users\\me\\Kasse.mmb');
  assert.equal(shellWord('C:\\Users\\me\\Kasse 2026.mmb', 'win32'), '"C:\\Users\\me\\Kasse 2026.mmb"');
  assert.equal(shellWord("C:\\Müller's Kasse,2026.mmb", 'win32'), '"C:\\Müller\'s Kasse,2026.mmb"');
});
