// The files a request crosses, from the socket to the SQL and back (CONTRIBUTING.md, "A
// search, file by file"): the command serves the 20k file in this process under V8's
// precise coverage; after a warm-up, the counters are reset, one request is answered, and
// every file of lib/ and bin/ with a function that ran is listed, in the order the
// request meets them where V8 tells (by the first function's position in the file).
//
//   npm run bench:walk [-- --path 'buchungen?von=…'] [--db FILE]

import { request } from 'node:http';
import { Session } from 'node:inspector/promises';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'bench/data/bookings-20000-analyzed.sqlite' },
    path: { type: 'string', default: 'buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.6' },
  },
});
const ROOT = resolve(import.meta.dirname, '..');
const auth = `Basic ${Buffer.from('bench:bench').toString('base64')}`;

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

// The command, as the installed binary runs it, listening on a port of the kernel's choice.
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
void main(['--db', values.db, '--port', '0'], process.env);
const api = await listening;

function get(path: string): Promise<number> {
  return new Promise((done, fail) => {
    request(`${api}${path}`, { headers: { authorization: auth } }, (response) => {
      response.resume();
      response.on('end', () => done(response.statusCode ?? 0));
    })
      .on('error', fail)
      .end();
  });
}

for (let i = 0; i < 200; i += 1) await get(values.path);
await session.post('Profiler.takePreciseCoverage');
const status = await get(values.path);
const { result } = await session.post('Profiler.takePreciseCoverage');

const ours = result
  .filter((script) => script.url.startsWith('file://') && script.functions.some((fn) => (fn.ranges[0]?.count ?? 0) > 0))
  .map((script) => relative(ROOT, fileURLToPath(script.url)))
  .filter((file) => /^dist\/(lib|bin)\//.test(file))
  .map((file) => file.replace(/^dist\//, '').replace(/\.js$/, '.ts'))
  .sort();
console.log(`GET /api/v1/${values.path} → ${status}: ${ours.length} files of lib/ and bin/ ran`);
for (const file of ours) console.log(`  ${file}`);
process.exit(0);
