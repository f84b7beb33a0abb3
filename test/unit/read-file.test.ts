// readRegularFile: what the command reads of its own files (configuration, credentials,
// TLS) is a regular file of bounded size; anything else is one CliError, at once.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CliError } from '../../bin/base/errors.js';
import { readRegularFile } from '../../bin/files/read-file.js';
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
