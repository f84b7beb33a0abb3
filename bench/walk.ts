// The files a search crosses, from the socket to the SQL and back (CONTRIBUTING.md, "A
// search, file by file"): the command, as the installed binary runs it over dist/, serves a
// book in this process under V8's precise coverage; after a warm-up, the counters are reset
// before each of three requests, and every file of lib/ and bin/ with a function that ran in
// each of the three is listed, by path. A file on the path runs in every search; a timer (the
// last-resort thread's heartbeat, the look at the followed file) runs in a request's window now and then, and
// asking three times leaves it out. test/walk.test.ts holds the count and CONTRIBUTING's list
// through `walk`, which runs this script in a process of its own (the command ends its process).
//
//   npm run bench:walk [-- --path 'buchungen?von=…'] [--db FILE]

import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { Session } from 'node:inspector/promises';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';

/** One typical search: a month and an amount, as a bank line asks. */
export const TYPICAL = 'buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.6';
const ROOT = resolve(import.meta.dirname, '..');
const SCRIPT = fileURLToPath(import.meta.url);
const MEASURED = 3;
const RESULT = 'walk: ';

export interface Walk {
  /** The request, after `/api/v1/`. */
  path: string;
  status: number;
  /** The answer's `anzahl`, the bookings found. */
  bookings: number;
  /** The files of lib/ and bin/ that ran in each measured search, as `lib/….ts`, by path. */
  files: string[];
}

/** The walk of `path` on the book `db`, run by this script in a process of its own. */
export async function walk(db: string, path: string = TYPICAL): Promise<Walk> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', SCRIPT, '--db', db, '--path', path, '--json'],
    { cwd: ROOT, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
  );
  const line = stdout.split('\n').find((text) => text.startsWith(RESULT));
  if (line === undefined) throw new Error(`the walk gave no result:\n${stdout}`);
  return JSON.parse(line.slice(RESULT.length)) as Walk;
}

/** The walk, in this process: the command serves `db` here and is left running. */
async function walkHere(db: string, path: string): Promise<Walk> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  const api = await serve(db);
  const get = (): Promise<{ status: number; body: string }> =>
    new Promise((done, fail) => {
      const auth = `Basic ${Buffer.from('bench:bench').toString('base64')}`;
      request(`${api}${path}`, { headers: { authorization: auth } }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => done({ status: response.statusCode ?? 0, body }));
      })
        .on('error', fail)
        .end();
    });

  for (let i = 0; i < 200; i += 1) await get();
  let files: string[] | undefined;
  let answer = { status: 0, body: '' };
  for (let i = 0; i < MEASURED; i += 1) {
    await session.post('Profiler.takePreciseCoverage');
    answer = await get();
    const { result } = await session.post('Profiler.takePreciseCoverage');
    const ran = new Set(
      result
        .filter((script) => script.url.startsWith('file://'))
        .filter((script) => script.functions.some((fn) => (fn.ranges[0]?.count ?? 0) > 0))
        .map((script) => relative(ROOT, fileURLToPath(script.url)))
        .filter((file) => /^dist\/(lib|bin)\//.test(file))
        .map((file) => file.replace(/^dist\//, '').replace(/\.js$/, '.ts')),
    );
    files = (files ?? [...ran]).filter((file) => ran.has(file));
  }
  const bookings = answer.status === 200 ? (JSON.parse(answer.body) as { anzahl: number }).anzahl : 0;
  return { path, status: answer.status, bookings, files: (files ?? []).sort() };
}

/** The command, as the installed binary runs it, listening on a port of the kernel's choice; its API's URL. */
async function serve(db: string): Promise<string> {
  const listening = new Promise<string>((done) => {
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        const url = /listening on (http:\/\/[^\s"]+\/api\/v1\/)/.exec(String(chunk))?.[1];
        if (url !== undefined) done(url);
        return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof stream.write;
    }
  });
  process.env['BOOKING_SEARCH_USER'] = 'bench';
  process.env['BOOKING_SEARCH_PASSWORD'] = 'bench';
  const { main } = (await import(resolve(ROOT, 'dist/bin/cli.js'))) as {
    main: (argv: string[], env: NodeJS.ProcessEnv) => Promise<void>;
  };
  void main(['--db', db, '--port', '0'], process.env);
  return listening;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === SCRIPT) {
  const { values } = parseArgs({
    options: {
      db: { type: 'string', default: 'bench/data/bookings-20000-analyzed.sqlite' },
      path: { type: 'string', default: TYPICAL },
      json: { type: 'boolean', default: false },
    },
  });
  const found = await walkHere(values.db, values.path);
  if (values.json) console.log(`${RESULT}${JSON.stringify(found)}`);
  else {
    console.log(`GET /api/v1/${found.path} → ${found.status}: ${found.files.length} files of lib/ and bin/ ran`);
    for (const file of found.files) console.log(`  ${file}`);
  }
  process.exit(0);
}
