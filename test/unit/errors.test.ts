// lib/errors.ts: which SQLite answers mean "not readable now, ask again" (Retry-After).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isNotReadableNow } from '../../lib/errors.js';

const withCode = (code: string): Error => Object.assign(new Error('x'), { code });

test('isNotReadableNow: locks, a hot journal, a log to recover, -wal/-shm only a writer can set up, a schema that changed under the search → true', () => {
  for (const code of [
    'SQLITE_BUSY',
    'SQLITE_BUSY_RECOVERY',
    'SQLITE_BUSY_SNAPSHOT',
    'SQLITE_LOCKED',
    'SQLITE_LOCKED_SHAREDCACHE',
    'SQLITE_READONLY_ROLLBACK',
    'SQLITE_READONLY_RECOVERY',
    'SQLITE_READONLY_DIRECTORY',
    'SQLITE_READONLY_CANTINIT',
    'SQLITE_READONLY_CANTLOCK',
    'SQLITE_SCHEMA',
  ]) {
    assert.equal(isNotReadableNow(withCode(code)), true, code);
  }
});

test('isNotReadableNow: what a wait does not mend → false', () => {
  for (const code of [
    'SQLITE_READONLY',
    'SQLITE_NOTADB',
    'SQLITE_CORRUPT',
    'SQLITE_CANTOPEN',
    'SQLITE_BUSYNESS',
    'SQLITE_SCHEMAS',
    'ENOENT',
  ]) {
    assert.equal(isNotReadableNow(withCode(code)), false, code);
  }
  assert.equal(isNotReadableNow(new Error('no code')), false);
  assert.equal(isNotReadableNow(undefined), false);
  assert.equal(isNotReadableNow('SQLITE_BUSY'), false);
});
