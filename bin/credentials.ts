// Credentials as the CLI reads them: the environment or a credentials file (docs/API.md,
// Credentials). Every problem is a CliError with one line that names the line number of
// the file, never its content.

import { readFileSync } from 'node:fs';
import { FOREIGN_HASH_ADVICE, foreignHashScheme, isPasswordHash, parsePasswordHash } from '../lib/password-hash.js';
import type { Credentials } from '../lib/types.js';
import { CliError, describeFsError } from './errors.js';

/** `user` with `secret`: a hash when it starts with `$scrypt$`, a plain password otherwise. */
export function credentialsOf(username: string, secret: string): Credentials {
  return isPasswordHash(secret) ? { username, passwordHash: secret } : { username, password: secret };
}

/**
 * One credential a line, `user:secret`, split at the first colon; empty lines and lines
 * starting with `#` are skipped. A final CR of a line (a file from Windows) is not part of
 * its secret.
 */
export function readCredentialsFile(file: string): Credentials[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error: unknown) {
    throw new CliError(`cannot read credentials file ${file}: ${describeFsError(error)}`);
  }
  const credentials: Credentials[] = [];
  const firstLine = new Map<string, number>();
  // Never echo a line: it holds a secret.
  const fail = (number: number, problem: string): CliError =>
    new CliError(`credentials file ${file}, line ${number}: ${problem}`);
  text.split('\n').forEach((raw, index) => {
    const number = index + 1;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const colon = line.indexOf(':');
    if (colon === -1) throw fail(number, 'expected user:secret');
    const username = line.slice(0, colon);
    const secret = line.slice(colon + 1);
    if (username === '') throw fail(number, 'the user is empty');
    if (secret === '') throw fail(number, 'the secret is empty');
    const first = firstLine.get(username);
    if (first !== undefined) throw fail(number, `the user of line ${first} is given again`);
    const foreign = foreignHashScheme(secret);
    if (foreign !== undefined) throw fail(number, `${FOREIGN_HASH_ADVICE(foreign)}`);
    if (isPasswordHash(secret)) {
      const parsed = parsePasswordHash(secret);
      if (!parsed.ok) throw fail(number, `the hash is not usable: ${parsed.problem}`);
    }
    firstLine.set(username, number);
    credentials.push(credentialsOf(username, secret));
  });
  if (credentials.length === 0) {
    throw new CliError(`credentials file ${file} holds no credentials (one line user:secret each)`);
  }
  return credentials;
}
