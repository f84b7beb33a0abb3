// Overlapping reloads, as two `systemctl reload` in a row make them (ExecReload returns at
// once): the configuration file is rewritten and SIGHUP sent, and 5 ms later rewritten
// again and SIGHUP sent again. First, the first file adds ten books and the second removes
// them and drops bob from book x; then two reloads that both add book y (the first with the
// ten books again), and y removed by a third. Each run is a fresh process. Prints, per run,
// what bob gets on x 300 ms and 5 s after, how many removed books still answer, the log's
// last SIGHUP line, and how many descriptors of the removed books' files the process holds.
//
//   npm run bench:reloads -- [--runs 5]

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);

const bin = new URL('../bin/booking-search-server.js', import.meta.url).pathname;
const fixture = (name: string): string => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const dir = mkdtempSync(join(tmpdir(), 'booking-search-reloads-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const x = join(dir, 'x.sqlite');
const db = new Database(x);
db.exec(fixture('schema.sql'));
db.exec(fixture('bookings.sql'));
db.close();
const copy = (name: string): string => {
  const file = join(dir, `${name}.sqlite`);
  copyFileSync(x, file);
  return file;
};
const ten = Array.from({ length: 10 }, (_, i) => copy(`b${i}`));
const y = copy('y');
const credentials = join(dir, 'credentials');
writeFileSync(credentials, 'alice:a-geheim\nbob:b-geheim\n', { mode: 0o600 });
const config = join(dir, 'books.conf');

type Book = [name: string, db: string, users: string];
const X: Book = ['x', x, 'alice, bob'];
const X_WITHOUT_BOB: Book = ['x', x, 'alice'];
const TEN = ten.map((file, i): Book => [`b${i}`, file, 'alice']);
const Y: Book = ['y', y, 'alice'];

/** The configuration of `books`, written whole (a rename), as an editor saves it. */
function write(books: readonly Book[]): void {
  const sections = books.map(
    ([name, file, users]) => `[book ${name}]\ndb = ${file}\nbase-path = /${name}\nusers = ${users}\n`,
  );
  writeFileSync(`${config}.new`, [`credentials-file = ${credentials}`, '', ...sections].join('\n'), { mode: 0o600 });
  renameSync(`${config}.new`, config);
}

async function twoReloads(child: ChildProcess, first: readonly Book[], second: readonly Book[]): Promise<void> {
  write(first);
  child.kill('SIGHUP');
  await sleep(5);
  write(second);
  child.kill('SIGHUP');
}

/** How many of the process's descriptors are on `files` (or their -wal, -shm, -journal). */
function descriptorsOn(pid: number, files: readonly string[]): number {
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (files.some((file) => target === file || target.startsWith(`${file}-`))) count += 1;
    } catch {
      // closed meanwhile
    }
  }
  return count;
}

async function status(origin: string, book: string, user: string, password: string): Promise<number> {
  const authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const response = await fetch(`${origin}/${book}/api/v1/status`, { headers: { authorization } });
  await response.arrayBuffer();
  return response.status;
}

const answering = async (origin: string, books: readonly Book[]): Promise<number> =>
  (await Promise.all(books.map(([name]) => status(origin, name, 'alice', 'a-geheim')))).filter((s) => s === 200).length;

interface Run {
  bob: [number, number];
  removedAnswering: number;
  lastLine: string;
  descriptorsLeft: number;
}

async function run(): Promise<Run> {
  write([X]);
  const child = spawn(process.execPath, [bin, '--config', config, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const deadline = Date.now() + 10_000;
  let listening = /listening on (http:\/\/[^/\s]+)\//.exec(stdout);
  while (listening === null) {
    if (Date.now() > deadline) throw new Error(`the service did not start: ${stderr}`);
    await sleep(20);
    listening = /listening on (http:\/\/[^/\s]+)\//.exec(stdout);
  }
  const origin = listening[1] as string;
  const pid = child.pid as number;
  try {
    await twoReloads(child, [X, ...TEN], [X_WITHOUT_BOB]);
    await sleep(300);
    const early = await status(origin, 'x', 'bob', 'b-geheim');
    await sleep(4_700);
    const late = await status(origin, 'x', 'bob', 'b-geheim');
    const removedAnswering = await answering(origin, TEN);
    const lastLine = (stderr.match(/SIGHUP: .*/g) ?? []).at(-1) ?? '';

    write([X]);
    child.kill('SIGHUP');
    await sleep(1_000);
    await twoReloads(child, [X, ...TEN, Y], [X, Y]);
    await sleep(1_000);
    write([X]);
    child.kill('SIGHUP');
    await sleep(1_000);
    return { bob: [early, late], removedAnswering, lastLine, descriptorsLeft: descriptorsOn(pid, [y, ...ten]) };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'close');
  }
}

let letIn = 0;
let answered = 0;
let leaked = 0;
for (let i = 1; i <= runs; i += 1) {
  const result = await run();
  if (result.bob.includes(200)) letIn += 1;
  if (result.removedAnswering > 0) answered += 1;
  if (result.descriptorsLeft > 0) leaked += 1;
  console.log(
    `run ${i}: bob on x after 300 ms ${result.bob[0]}, after 5 s ${result.bob[1]}; removed books answering ${result.removedAnswering} of 10; descriptors left on removed books ${result.descriptorsLeft}; last line "${result.lastLine.replace(config, 'books.conf')}"`,
  );
}
console.log(
  `${runs} runs: bob let in after the last file dropped him in ${letIn}; removed books answering in ${answered}; descriptors of removed books left in ${leaked}`,
);
