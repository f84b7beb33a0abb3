// The real CLI as a child process, for the CLI test files.

import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { TestContext } from 'node:test';
import './built.js';

export const BIN = new URL('../../bin/booking-search-server.js', import.meta.url).pathname;
export const USER = { BOOKING_SEARCH_USER: 'kasse', BOOKING_SEARCH_PASSWORD: 'ge:heim' };
/** The ISO 8601 time that starts every line the running CLI writes. */
export const TIME = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`;

/**
 * How long a test waits for an event of the CLI (its listening line, a line it logs) before
 * it fails: only a CLI that hangs takes it all. On CI's two shared cores under load, node
 * processes alone (a primary and its workers) can take many seconds to start.
 */
export const EVENT_WAIT_MS = 30_000;

// Without --app, an application's file recognised by its tables is named after the URL;
// the books of --config FILE are listed after the origin (`http://127.0.0.1:PORT/ (3 books from F)`).
const LISTENING = new RegExp(
  String.raw`^${TIME} booking-search-server listening on (https?:\/\/127\.0\.0\.1:(\d+)(\/[^\s]*)?\/api\/v1\/|unix:([^:\s]+):(\/[^\s]*)?\/api\/v1\/|https?:\/\/127\.0\.0\.1:\d+\/(?= \(\d+ books? from ))(?: \(.+\))?$`,
  'm',
);

export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  if (!('BOOKING_SEARCH_USER' in extra)) delete env['BOOKING_SEARCH_USER'];
  if (!('BOOKING_SEARCH_PASSWORD' in extra)) delete env['BOOKING_SEARCH_PASSWORD'];
  return env;
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function collect(child: ChildProcess): () => { stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return () => ({ stdout, stderr });
}

/** How a test runs the CLI: by default `node BIN args…` as the test's own user. */
export type Launcher = (args: string[]) => [command: string, args: string[]];
const asTestUser: Launcher = (args) => [process.execPath, [BIN, ...args]];

/**
 * Runs the CLI to its end (at most 60 s: a test runs many at once, which on a busy machine
 * took over 15 s to end, though each had said all it had to say).
 */
export async function run(
  args: string[],
  env: NodeJS.ProcessEnv = cleanEnv(USER),
  launch: Launcher = asTestUser,
): Promise<Finished> {
  const [command, commandArgs] = launch(args);
  const child = spawn(command, commandArgs, { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  const output = collect(child);
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  return { code, signal, ...output() };
}

export interface Running {
  child: ChildProcess;
  /** `http(s)://127.0.0.1:PORT/…/api/v1/`, or `unix:PATH:/…/api/v1/` with --socket. */
  api: string;
  /** `http(s)://127.0.0.1:PORT`; with --socket, `http://localhost` (use `socketPath`). */
  origin: string;
  /** The Unix socket it listens on, with --socket. */
  socketPath: string | undefined;
  output: () => { stdout: string; stderr: string };
  stop: (signal?: NodeJS.Signals) => Promise<Finished>;
}

/**
 * Starts the CLI and waits for its listening line; it is killed when the test ends. It
 * listens on port 0 unless `args` hold --socket or --port. With `ownGroup`, in a process
 * group of its own, as systemd or a terminal starts it: `stop` signals every process of it.
 */
export async function start(
  t: TestContext,
  args: string[],
  env: NodeJS.ProcessEnv = cleanEnv(USER),
  launch: Launcher = asTestUser,
  { ownGroup = false } = {},
): Promise<Running> {
  const where = args.includes('--socket') || args.includes('--port') ? [] : ['--port', '0'];
  const [command, commandArgs] = launch([...where, ...args]);
  const child = spawn(command, commandArgs, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: ownGroup });
  const signal = (name: NodeJS.Signals): void => {
    try {
      if (ownGroup) process.kill(-(child.pid as number), name);
      else child.kill(name);
    } catch {
      // already gone
    }
  };
  t.after(() => signal('SIGKILL'));
  const output = collect(child);
  const exited = once(child, 'close');
  const deadline = Date.now() + EVENT_WAIT_MS;
  let match = listeningLine(output().stdout);
  while (match === null) {
    if (child.exitCode !== null || Date.now() > deadline) assert.fail(`CLI did not start: ${JSON.stringify(output())}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    match = listeningLine(output().stdout);
  }
  const api = match[1] as string;
  const socketPath = match[4];
  return {
    child,
    api,
    origin: socketPath === undefined ? new URL(api).origin : 'http://localhost',
    socketPath,
    output,
    stop: async (name = 'SIGTERM') => {
      signal(name);
      const [code, exitSignal] = (await exited) as [number | null, NodeJS.Signals | null];
      return { code, signal: exitSignal, ...output() };
    },
  };
}

/** The listening line in `stdout`, as text or (--log-format json) as `{"time","message"}`. */
function listeningLine(stdout: string): RegExpExecArray | null {
  const text = LISTENING.exec(stdout);
  const end = stdout.indexOf('\n');
  if (text !== null || !stdout.startsWith('{') || end === -1) return text;
  const first = JSON.parse(stdout.slice(0, end)) as { time: string; message: string };
  return LISTENING.exec(`${first.time} ${first.message}`);
}

/**
 * Asserts a failure: the exit code and exactly one line on stderr, without a stack. The
 * line is compared without its time, which the service's refusal after the command line
 * was understood (exit 1) must have, and a wrong command line (exit 2) and a command's
 * refusal (`check`, `hash-password`: `command` true) must not.
 */
export function assertFails(result: Finished, code: number, line: string | RegExp, command = false): void {
  assert.equal(result.code, code, JSON.stringify(result));
  const timed = new RegExp(`^${TIME} `);
  const lines = result.stderr.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, `one line on stderr: ${JSON.stringify(result.stderr)}`);
  const logged = code !== 2 && !command;
  assert.equal(
    timed.test(lines[0] as string),
    logged,
    `${logged ? 'a time' : 'no time'} on a failure with exit ${code}: ${lines[0]}`,
  );
  lines[0] = (lines[0] as string).replace(timed, '');
  if (typeof line === 'string') assert.equal(lines[0], line);
  else assert.match(lines[0] as string, line);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
}

/** The guard processes `pid` has started: its children running bin/guard/guard. */
export function guardsOf(pid: number): number[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there is none
  }
  return out
    .split('\n')
    .filter((line) => /guard\.[jt]s/.test(line))
    .map((line) => Number.parseInt(line.trim(), 10));
}

export function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** A throwaway self-signed certificate (EC P-256 or RSA 2048, one day) for 127.0.0.1, made with openssl. */
export function makeCertificate(cert: string, key: string, name = '127.0.0.1', type: 'ec' | 'rsa' = 'ec'): void {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      ...(type === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'] : ['-newkey', 'rsa:2048']),
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
}

/**
 * Polls `holds` every 20 ms until it is true and gives the milliseconds that took; fails
 * naming `what` after `withinMs`: EVENT_WAIT_MS (a loaded machine), unless the test's claim
 * is a shorter bound.
 */
export async function until(
  holds: () => boolean | Promise<boolean>,
  what: string | (() => string),
  withinMs = EVENT_WAIT_MS,
): Promise<number> {
  const started = Date.now();
  while (!(await holds())) {
    if (Date.now() - started > withinMs)
      assert.fail(`not within ${withinMs} ms: ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

/** Waits (at most EVENT_WAIT_MS) until `output()` holds `pattern` (its flags kept) `count` times. */
export async function waitFor(output: () => string, pattern: RegExp, count = 1): Promise<void> {
  const deadline = Date.now() + EVENT_WAIT_MS;
  const every = new RegExp(pattern, `${pattern.flags.replace('g', '')}g`);
  while ((output().match(every) ?? []).length < count) {
    if (Date.now() > deadline) assert.fail(`no ${pattern} in ${JSON.stringify(output())}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The line (without its time and the program's name) with which the CLI refuses `file`,
 * owned by `owner`, whose directory `dir` the `user` could write, each `name (uid N)`, and
 * which `check` prints after "Cannot be served: ". Spelled out here so that the tests pin every word of it.
 */
export function directoryRefusal(file: string, dir: string, user: string, owner: string): string {
  return `refusing database ${file}: its directory ${dir} is writable by this service's user ${user}, which does not own the file (its owner is ${owner}), so SQLite could create -wal, -shm or -journal files there that the application then cannot write; run the service as the file's owner, or as a user of its own that may read the file and the directory but not write the directory (e.g. in the application's group, the directory 0750 and the file 0640: docs/operations.md, Users and permissions)`;
}
