// Credentials as the command reads them: the environment or a credentials file (docs/API.md,
// Credentials). lib/credentials.ts checks them; this module says where a problem is — the
// line number of the file, never its content, or the variable.

import { sep } from 'node:path';
import { type Credentials, credentialsFromPairs } from '../../lib/internal.js';
import { CliError } from '../base/index.js';
import { ensureOnlyOwnerCanChange, readTextFile } from '../files/index.js';
import type { Origin } from './configuration.js';

/** What the library finds wrong with a list of credentials (lib/credentials.ts). */
type CredentialsProblem = Extract<ReturnType<typeof credentialsFromPairs>, { ok: false }>['problem'];
/** What the command finds wrong: the library's problems, and a user or plain password with white space around it. */
type Problem = CredentialsProblem | { kind: 'spaced user' | 'spaced password'; index: number };

/**
 * The credentials file, read and checked; every problem is a CliError (exit 1). `reload.named`:
 * the file the configuration names now; when that is another (or none), `file` is the
 * running one, and a problem says so and what the next start reads.
 */
export function readCredentialsFile(file: string, reload?: { named: string | undefined }): Credentials[] {
  try {
    // Whoever can write it can let themselves in (bin/files/file-safety.ts).
    ensureOnlyOwnerCanChange(`credentials file ${file}`, file);
    return parseCredentialsFile(readTextFile(`credentials file ${file}`, file), file);
  } catch (error: unknown) {
    if (reload === undefined || reload.named === file || !(error instanceof CliError)) throw error;
    const { named } = reload;
    const restart = named === undefined ? '' : ': restart to apply it';
    throw new CliError(
      `${error.message}; that is the running credentials file, and ${atTheNextStart(named)}${restart}`,
    );
  }
}

/** Which credentials the next start reads, when the configuration names `named` (or no file) instead of the running one. */
export function atTheNextStart(named: string | undefined): string {
  return named === undefined
    ? 'the configuration names no credentials file, so the next start needs --credentials-file FILE (or, for a single user, BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD)'
    : `the configuration's ${named} applies at the next start`;
}

/**
 * One credential a line, `user:secret`, split at the first colon; empty lines and lines
 * starting with `#` are skipped. A final CR of a line (a file from Windows) is not part of
 * its secret, as in the configuration file.
 */
export function parseCredentialsFile(text: string, file: string): Credentials[] {
  const pairs: Array<[username: string, secret: string]> = [];
  /** The line number of each entry of `pairs`. */
  const lines: number[] = [];
  // Never echo a line: it holds a secret.
  const fail = (number: number | undefined, problem: string): CliError =>
    new CliError(`credentials file ${file}, line ${number}: ${problem}`);
  text.split('\n').forEach((raw, index) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const colon = line.indexOf(':');
    if (colon === -1) throw fail(index + 1, 'expected user:secret');
    pairs.push([line.slice(0, colon), line.slice(colon + 1)]);
    lines.push(index + 1);
  });
  const checked = checkPairs(pairs);
  if (checked.ok) return checked.credentials;
  const { problem } = checked;
  if (problem.kind === 'empty list') {
    throw new CliError(`credentials file ${file} holds no credentials (one line user:secret each)`);
  }
  const line = lines[problem.index ?? 0];
  if (problem.kind === 'repeated username') throw fail(line, `the user of line ${lines[problem.first]} is given again`);
  throw fail(line, describe(problem, 'file'));
}

/**
 * BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD, when either is set; an empty variable
 * counts as not set (docs/settings.md).
 */
export function environmentCredentials(env: NodeJS.ProcessEnv): Credentials[] | undefined {
  const username = env['BOOKING_SEARCH_USER'] || undefined;
  const password = env['BOOKING_SEARCH_PASSWORD'] || undefined;
  if (username === undefined && password === undefined) return undefined;
  if (username === undefined)
    throw new CliError('BOOKING_SEARCH_PASSWORD is set but BOOKING_SEARCH_USER is empty or missing');
  if (password === undefined)
    throw new CliError('BOOKING_SEARCH_USER is set but BOOKING_SEARCH_PASSWORD is empty or missing');
  const checked = checkPairs([[username, password]]);
  if (!checked.ok) throw new CliError(describe(checked.problem, 'environment'));
  return checked.credentials;
}

/**
 * A user or a plain password that begins or ends with white space refused: a copy and paste
 * adds it far more often than anybody means it, and nothing would say why the login fails.
 * A user's first, before the library's checks (to which a tab at its end is a control
 * character); a password's after them, for only they tell a plain password from a hash.
 */
function checkPairs(
  pairs: ReadonlyArray<readonly [string, string]>,
): { ok: true; credentials: Credentials[] } | { ok: false; problem: Problem } {
  const spaced = (text: string | undefined): boolean => text !== undefined && text !== text.trim();
  const user = pairs.findIndex(([username]) => spaced(username));
  if (user !== -1) return { ok: false, problem: { kind: 'spaced user', index: user } };
  const checked = credentialsFromPairs(pairs);
  if (!checked.ok) return checked;
  for (const [index, { password }] of checked.credentials.entries()) {
    if (spaced(password)) return { ok: false, problem: { kind: 'spaced password', index } };
  }
  return checked;
}

/** A problem of one entry in the command's words: of a line of the file, or of a variable. */
function describe(problem: Problem, where: 'file' | 'environment'): string {
  const inFile = where === 'file';
  switch (problem.kind) {
    case 'spaced user':
      return `${inFile ? 'the user' : 'BOOKING_SEARCH_USER'} begins or ends with a space or tab, which a copy often adds: remove it`;
    case 'spaced password':
      return `${inFile ? '' : 'BOOKING_SEARCH_PASSWORD: '}the password begins or ends with a space or tab, which a copy often adds: remove it; a password that has one is given as its hash (booking-search-server hash-password)`;
    case 'empty username':
      return inFile ? 'the user is empty' : 'BOOKING_SEARCH_USER is empty';
    case 'colon in username':
      return inFile ? 'the user must not contain a colon' : 'BOOKING_SEARCH_USER must not contain a colon';
    case 'control character in username':
      return `${inFile ? 'the user' : 'BOOKING_SEARCH_USER'} must not contain a control character`;
    case 'unusable hash':
      return `${inFile ? 'the hash' : 'BOOKING_SEARCH_PASSWORD holds a hash that'} is not usable: ${problem.detail}; booking-search-server hash-password makes one`;
    case 'foreign hash':
      return inFile ? problem.detail : `BOOKING_SEARCH_PASSWORD: ${problem.detail}`;
    case 'too long':
      return `${inFile ? 'the user and password' : 'BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD'} together are too long: at most ${problem.maxBytes} bytes of UTF-8`;
    default:
      // What else a JavaScript argument can get wrong comes out of a line as an empty secret.
      return inFile ? 'the secret is empty' : 'BOOKING_SEARCH_PASSWORD is empty';
  }
}

/** Where a service's credentials came from, for the start-up message. */
export type CredentialsFrom = 'environment' | 'file' | 'demo default';

const DEMO_CREDENTIALS: Credentials[] = [{ username: 'demo', password: 'demo' }];

/**
 * A serve command's `credentialsSource`: which credentials, and where they were named;
 * `running`: a reload's, which keeps the file the configuration no longer names. A file in
 * systemd's `copies` ($CREDENTIALS_DIRECTORY, LoadCredential=) is a copy made at the start.
 */
export function credentialsSource(
  from: CredentialsFrom,
  file: string | undefined,
  origin: Origin | 'running' | undefined,
  copies: string | undefined = process.env['CREDENTIALS_DIRECTORY'],
): string {
  if (from === 'environment') return 'BOOKING_SEARCH_USER';
  if (from === 'demo default') return 'the demo default';
  if (origin === 'running') return `${file} (running until the next start)`;
  const where =
    origin?.kind === 'environment'
      ? origin.variable
      : origin?.kind === 'file'
        ? `${origin.file}:${origin.line}`
        : '--credentials-file';
  const copied =
    copies && file?.startsWith(`${copies}${sep}`)
      ? "; systemd's copy, made as the service started: a restart copies it anew"
      : '';
  return `${file} (${where}${copied})`;
}

/** Where the credentials come from; a file is named, not read. */
export function readCredentials(
  env: NodeJS.ProcessEnv,
  file: string | undefined,
  demo: boolean,
): { credentials: Credentials[]; from: CredentialsFrom } {
  // docs/settings.md: an empty environment variable counts as not set.
  const inEnvironment = Boolean(env['BOOKING_SEARCH_USER'] || env['BOOKING_SEARCH_PASSWORD']);
  if (inEnvironment && file !== undefined) {
    throw new CliError(
      'credentials are given twice: use BOOKING_SEARCH_USER/BOOKING_SEARCH_PASSWORD or --credentials-file, not both',
    );
  }
  if (file !== undefined) return { credentials: [], from: 'file' };
  const fromEnvironment = environmentCredentials(env);
  if (fromEnvironment !== undefined) return { credentials: fromEnvironment, from: 'environment' };
  if (demo) return { credentials: DEMO_CREDENTIALS, from: 'demo default' };
  throw new CliError(NO_CREDENTIALS);
}

/** Why a command has no credentials when none are given (`check --config` tells it from a wrong one). */
export const NO_CREDENTIALS =
  'no credentials: set BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD, or pass --credentials-file FILE';
