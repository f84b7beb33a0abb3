// readRegularFile: what the command reads of its own files (configuration, credentials,
// TLS) is a regular file of bounded size; anything else is one CliError, at once.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CliError } from '../../bin/base/errors.js';
import { readRegularFile, readTextFile } from '../../bin/files/read-file.js';
import { tempDir } from '../support/helpers.js';

test('a regular file is read whole; a FIFO, a device, a directory, a missing or too large file is one CliError', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'a.conf');
  writeFileSync(file, 'port = 1\n');
  assert.equal(readRegularFile('configuration file', file).toString('utf8'), 'port = 1\n');
  const pipe = join(dir, 'pipe');
  execFileSync('mkfifo', [pipe]);
  const refused = (path: string, max: number | undefined, message: string): void =>
    assert.throws(
      () => readRegularFile(`configuration file ${path}`, path, max),
      (error: unknown) =>
        error instanceof CliError && error.message === `cannot read configuration file ${path}: ${message}`,
    );
  refused(pipe, undefined, 'it is a FIFO (named pipe), not a regular file');
  refused('/dev/zero', undefined, 'it is a device, not a regular file');
  refused(dir, undefined, 'it is a directory, not a regular file');
  refused(join(dir, 'none'), undefined, 'no such file');
  refused(file, 8, 'it is larger than 8 bytes');
  assert.equal(readRegularFile('configuration file', file, 9).length, 9);
});

test('a text file is UTF-8, its BOM read away; UTF-16 (with a BOM or without) and Windows-1252 are one CliError each, saying to save it as UTF-8', (t) => {
  const dir = tempDir(t);
  const read = (name: string, bytes: Buffer): string => {
    const file = join(dir, name);
    writeFileSync(file, bytes);
    try {
      return readTextFile(`credentials file ${file}`, file);
    } catch (error: unknown) {
      assert.ok(error instanceof CliError);
      return error.message.replace(`credentials file ${file} `, '');
    }
  };
  const utf16 = `UTF-16 (Notepad's "Unicode", PowerShell 5's >)`;
  assert.equal(read('utf8', Buffer.from('abgleich:Grüße\r\n')), 'abgleich:Grüße\r\n');
  assert.equal(read('bom', Buffer.from('\uFEFFabgleich:Grüße\r\n')), 'abgleich:Grüße\r\n');
  assert.equal(read('empty', Buffer.alloc(0)), '');
  const le = Buffer.from('\uFEFFabgleich:plain-pw\r\n', 'utf16le');
  assert.equal(read('utf16le', le), `is ${utf16}: save it as UTF-8`);
  assert.equal(read('utf16le-unended', le.subarray(0, -4)), `is ${utf16}: save it as UTF-8`);
  assert.equal(read('utf16be', Buffer.from(le).swap16()), `is ${utf16}: save it as UTF-8`);
  assert.equal(read('utf16-no-bom', le.subarray(2)), `holds NUL bytes, as ${utf16} does: save it as UTF-8`);
  // Windows-1252 ("ANSI"): ü is 0xfc, ß 0xdf.
  const ansi = Buffer.concat([Buffer.from('# Kasse\r\nabgleich:Gr'), Buffer.from([0xfc, 0xdf]), Buffer.from('e\r\n')]);
  assert.equal(read('ansi', ansi), 'is not UTF-8 (line 2): save it as UTF-8');
  assert.equal(read('ansi-last', ansi.subarray(0, -2)), 'is not UTF-8 (line 2): save it as UTF-8');
  assert.equal(read('ansi-first', ansi.subarray(9)), 'is not UTF-8 (line 1): save it as UTF-8');
});
