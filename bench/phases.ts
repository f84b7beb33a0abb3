// Each phase of a typical search in-process, this build and, with --before, an earlier one
// (each in a process of its own, with its own better-sqlite3; rounds alternate between the
// builds), CPU µs per request, medians of the rounds. What the profile of the command under
// load (bench/profile.ts) puts to each phase, measured alone: parsing, the login of a
// remembered client, the throttle key, the request facts, the queue and its turns, the
// read transaction, count and page, formatting, the access line and writing the answer.
// A phase an earlier build does not have, or calls another way, is left empty. Prints
// markdown.
//
//   npm run bench:phases -- [--rounds 5] [--queries 2000] [--before DIR]

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import type { SearchQuery } from '../lib/query.js';
import { behindAccessLog, fakeExchange } from './fake-http.js';
import { median, queriesFor, toQueryString } from './shapes.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    queries: { type: 'string', default: '2000' },
    before: { type: 'string' },
    // Internal: measure one round of the build at this root (the searches in the file
    // --queries names) and print it as JSON.
    child: { type: 'string' },
  },
});
const FILE = resolve('bench/data/bookings-20000-analyzed.sqlite');
// Passes over the searches before a phase is measured, and measured.
const WARM_UP = 10;
const MEASURED = 20;

if (values.child !== undefined) {
  const result = await measureBuild(values.child, JSON.parse(readFileSync(values.queries, 'utf8')) as SearchQuery[]);
  process.stderr.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

// The searches, chosen once with this build's driver, for every build alike.
const QUERIES = join(mkdtempSync(join(tmpdir(), 'bench-phases-')), 'queries.json');
process.on('exit', () => rmSync(dirname(QUERIES), { recursive: true, force: true }));
{
  const db = new Database(FILE, { readonly: true, fileMustExist: true });
  writeFileSync(QUERIES, JSON.stringify(queriesFor(db, 'month exact', Number(values.queries), 11)));
  db.close();
}
const builds: Array<[string, string]> = [['this build', '.']];
if (values.before !== undefined) builds.push(['before', values.before]);
const results = new Map<string, Array<Record<string, number>>>(builds.map(([name]) => [name, []]));
for (let round = 0; round < Number(values.rounds); round += 1) {
  for (const [name, root] of round % 2 === 0 ? builds : [...builds].reverse()) {
    // better-sqlite3 12 on Node 24 may abort when the garbage collector frees one of its
    // statements (an assertion in its destructor): such a round of a build is run again.
    let line: string | undefined;
    let stderr = '';
    for (let attempt = 0; attempt < 3 && line === undefined; attempt += 1) {
      const child = spawnSync(
        process.execPath,
        ['--import', 'tsx', 'bench/phases.ts', '--child', resolve(root), '--queries', QUERIES],
        { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] },
      );
      stderr = child.stderr;
      line = stderr.split('\n').find((l) => l.startsWith('{'));
    }
    if (line === undefined) throw new Error(`${name}: ${stderr}`);
    results.get(name)?.push(JSON.parse(line) as Record<string, number>);
  }
  process.stderr.write(`round ${round + 1} of ${values.rounds}\n`);
}
console.log(
  `In-process, the typical search on the 20k ANALYZEd book (a month, one exact amount), ${values.queries} requests per phase, CPU µs per request, medians of ${values.rounds} rounds, each build in a process of its own:\n`,
);
console.log(`| phase | ${builds.map(([name]) => name).join(' | ')} |`);
console.log(`|---|${builds.map(() => '---:').join('|')}|`);
const phases = [...new Set(builds.flatMap(([name]) => Object.keys(results.get(name)?.[0] ?? {})))];
for (const phase of phases) {
  const cells = builds.map(([name]) => {
    const figures = (results.get(name) ?? []).map((r) => r[phase]).filter((f): f is number => f !== undefined);
    return figures.length === 0 ? '' : median(figures).toFixed(2);
  });
  console.log(`| ${phase} | ${cells.join(' | ')} |`);
}

// ---------------------------------------------------------------------------------------

/** One round of every phase the build at `root` has, CPU µs per request. */
async function measureBuild(root: string, queries: SearchQuery[]): Promise<Record<string, number>> {
  const count = queries.length;
  const { IncomingMessage, ServerResponse } = await import('node:http');
  const { Duplex } = await import('node:stream');
  const load = async (path: string): Promise<Record<string, unknown> | undefined> => {
    try {
      return (await import(pathToFileURL(join(root, 'dist', path)).href)) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };
  // biome-ignore lint/suspicious/noExplicitAny: each build's own modules, whatever their types.
  type Any = any;
  const Driver = createRequire(join(root, 'package.json'))('better-sqlite3') as Any;
  // Every statement kept for the life of this process: better-sqlite3 12 on Node 24 aborts
  // when the garbage collector frees one (an assertion in its destructor), and the handler
  // prepares some only to check the file.
  const kept: unknown[] = [];
  const prepare = Driver.prototype.prepare;
  Driver.prototype.prepare = function (this: unknown, ...args: unknown[]) {
    const statement = prepare.apply(this, args);
    kept.push(statement);
    return statement;
  };
  const lib: Record<string, Any> = {};
  for (const name of [
    'query',
    'format',
    'search-endpoint',
    'auth',
    'login',
    'throttle',
    'options',
    'credentials',
    'client-address',
    'request-facts',
    'request',
    'respond',
    'search/index',
    'search',
  ]) {
    lib[name] = await load(`lib/${name}.js`);
  }
  // The answer's format: lib/search-endpoint.js, in older builds a file of its own.
  lib['format'] ??= lib['search-endpoint'];
  const log = (await load('bin/base/log.js')) as Any;
  const searchLib = lib['search/index'] ?? lib['search'];

  const db = new Driver(FILE, { readonly: true, fileMustExist: true });
  // As the command opens it (where this build's command maps the file).
  const database = await load('bin/files/database-file.js');
  if (typeof database?.['MMAP_BYTES'] === 'number') db.pragma(`mmap_size = ${database['MMAP_BYTES']}`);
  const raw = queries.map((q) => toQueryString(q));
  const search = searchLib.createBookingSearch(db);
  const results = queries.map((q) => search(q));
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  const header = `Basic ${Buffer.from('bench:bench').toString('base64')}`;
  const socket = (): Any => {
    const s = new Duplex({ read() {}, write: (_chunk, _encoding, done) => done() }) as Any;
    s.remoteAddress = ['127', '0', '0', '1'].join('.');
    return s;
  };
  const sockets = Array.from({ length: 16 }, socket);
  const requests = (): Any[] =>
    raw.map((query, i) => {
      const req = new IncomingMessage(sockets[i % 16]) as Any;
      req.url = `/api/v1/buchungen?${query}`;
      req.method = 'GET';
      req.rawHeaders = ['Host', '127.0.0.1', 'Authorization', header];
      return req;
    });

  const phases: Record<string, (() => void) | (() => Promise<void>) | undefined> = {};
  phases['parsing the query'] = () => {
    for (const r of raw) lib['query'].parseSearchQuery(r);
  };

  // The login of a client whose header was accepted before.
  const settings = lib['options']?.resolveOptions({});
  const users = lib['credentials']?.validateCredentials({ username: 'bench', password: 'bench' });
  if (lib['login']?.createLogin !== undefined) {
    const authenticator = lib['auth'].createAuthenticator(users, settings);
    const login = lib['login'].createLogin(authenticator, lib['throttle'].createThrottle(settings));
    const connection = { destroyed: false };
    login(header, '127.0.0.1', connection);
    phases['login (a remembered client, the throttle included)'] = () => {
      for (let i = 0; i < count; i += 1) login(header, sockets[i % 16].remoteAddress, connection);
    };
  } else if (lib['auth'] !== undefined && lib['throttle'] !== undefined && settings !== undefined) {
    // Before: the throttle's address check, then the remembered header.
    const authenticator = lib['auth'].createAuthenticator(users, settings);
    const throttle = lib['throttle'].createThrottle({
      maxFailures: settings.maxAuthFailures,
      windowMs: settings.authFailureWindowMs,
      maxAddresses: settings.maxTrackedAddresses,
      now: settings.now,
    });
    authenticator.check(header);
    phases['login (a remembered client, the throttle included)'] = () => {
      for (let i = 0; i < count; i += 1) {
        throttle.retryAfter(sockets[i % 16].remoteAddress);
        authenticator.check(header);
      }
    };
  }
  // The client's address and the request's facts: lib/request.js, in older builds two files of their own.
  const requestLib = lib['request'] ?? { ...lib['client-address'], ...lib['request-facts'] };
  const throttleKey = requestLib.throttleKey;
  if (throttleKey !== undefined) {
    phases['the throttle key (an IPv6 address by its /64)'] = () => {
      for (let i = 0; i < count; i += 1) throttleKey(sockets[i % 16].remoteAddress);
    };
  }
  const { clientAddress, recordFacts } = requestLib;
  // The trusted proxies are an option's now (lib/options.js), the client address's in earlier builds.
  const trustedPeers = requestLib.trustedPeers ?? lib['options']?.trustedPeers;
  const trusted = trustedPeers?.([]);
  // As the handler records a search's facts (an earlier build's recordFacts takes no target).
  const searchFacts = (req: Any, address: string): Any => recordFacts(req, address, 'search', '/api/v1/buchungen');
  let factsRequests = requests();
  phases['request facts (the client address, recorded on the request)'] = () => {
    for (const req of factsRequests) searchFacts(req, clientAddress(req, trusted));
    factsRequests = requests();
  };

  // The transaction, count and page, as a turn of 16 runs them.
  const read = db.prepare('SELECT 1 FROM entries LIMIT 1').pluck();
  phases['the read transaction (BEGIN, COMMIT: its lock cycle), one for 16 searches'] = () => {
    // The same reads inside one transaction are taken out: only the transactions' own cost remains.
    begin.run();
    const started = cpu();
    for (let i = 0; i < count; i += 16) read.get();
    const reads = cpu() - started;
    commit.run();
    for (let i = 0; i < count; i += 16) {
      begin.run();
      read.get();
      commit.run();
    }
    spentElsewhere += 2 * reads;
  };
  const sql = searchLib.SQL;
  const positional = typeof sql.exactCount === 'string';
  const count_ = positional ? db.prepare(sql.exactCount).pluck() : db.prepare(sql.count('exact')).pluck();
  const pageSql = positional ? sql.exactPage : sql.page.length >= 2 ? sql.page('exact', 'joined') : sql.page('exact');
  const page = db.prepare(pageSql).raw();
  const bounds = queries.map((q) => searchLib.toBounds(q));
  phases['count (SQLite, in a transaction)'] = () => {
    begin.run();
    if (positional) for (const b of bounds) count_.get(b.low, b.von, b.bis);
    else for (const b of bounds) count_.get(b);
    commit.run();
  };
  phases['page (SQLite, names joined, in a transaction)'] = () => {
    begin.run();
    if (positional) for (const b of bounds) page.all(b.low, b.von, b.bis, 50);
    else for (const b of bounds) page.all({ ...b, limit: 50 });
    commit.run();
  };
  phases['the search alone (its own transaction)'] = () => {
    for (const q of queries) search(q);
  };
  phases['the search, 16 in one transaction'] = () => {
    for (let i = 0; i < count; i += 16) {
      begin.run();
      for (const q of queries.slice(i, i + 16)) search(q);
      commit.run();
    }
  };
  // The whole way of the handler: 16 searches of 16 connections arrive in one turn of the
  // event loop and are answered; beyond "16 in one transaction", the queue's own cost.
  const submit = typeof search.answer === 'function' ? search.answer : search.queue;
  phases['the search through the queue, 16 arriving in one turn'] = async () => {
    for (let i = 0; i < count; i += 16) {
      await new Promise<void>((done) => {
        const end = Math.min(i + 16, count);
        let left = end - i;
        for (let j = i; j < end; j += 1) {
          const from = { user: 'bench', address: '127.0.0.1', connection: sockets[j % 16], abandoned: () => false };
          submit(
            queries[j],
            () => {
              left -= 1;
              if (left === 0) done();
            },
            from,
          );
        }
      });
    }
  };
  phases['formatting the answer (and its byte length)'] = () => {
    for (const r of results) Buffer.byteLength(lib['format'].formatSearchResult(r));
  };

  // node:http's writing of a 200 with the answer's headers, into a socket that takes it all.
  const bodies = results.map((r) => lib['format'].formatSearchResult(r));
  const send = lib['respond'].send;
  phases['writing the answer (node:http, no kernel)'] = () => {
    const reqs = requests();
    for (let i = 0; i < reqs.length; i += 1) {
      const res = new ServerResponse(reqs[i]) as Any;
      res.shouldKeepAlive = true; // as node:http decides for an HTTP/1.1 request
      res.assignSocket(socket());
      // Before, send took the request first (send(req, res, status, json, extra = [])).
      if (send.length >= 4) send(reqs[i], res, 200, bodies[i]);
      else send(res, 200, bodies[i]);
    }
  };

  // The access line: the listener, the line, the batch it joins (stdout here goes nowhere).
  const handlerLib = (await load('lib/index.js')) as Any;
  const logs = log?.withAccessLog !== undefined || log?.accessLog !== undefined;
  if (logs) {
    process.stdout.write = (() => true) as Any;
    const logged = behindAccessLog(log, handlerLib?.requestFacts, (req: Any) => {
      const facts = searchFacts(req, '127.0.0.1');
      facts.user = 'bench';
    });
    phases['the access line'] = () => {
      for (const req of requests()) {
        const res = new ServerResponse(req) as Any;
        logged(req, res);
        res.statusCode = 200;
        res.emit('close');
      }
    };
  }

  // The whole way of a request through the command's handler (createHandler behind the
  // access log, as the command serves it), without node:http's parsing and the kernel: the
  // requests made by hand, the answers written into sockets that take everything.
  if (handlerLib?.createHandler !== undefined && logs) {
    process.stdout.write = (() => true) as Any;
    const handler = behindAccessLog(
      log,
      handlerLib.requestFacts,
      handlerLib.createHandler(db, { username: 'bench', password: 'bench' }, { maxAuthFailures: 0 }),
    );
    // Connections of their own: writing an answer without keep-alive above marked the
    // others as closing, and a closing connection's requests are dropped.
    const connections = Array.from({ length: 16 }, socket);
    const exchange = (url: string, i: number): Any => {
      return fakeExchange(connections[i % 16], url, header);
    };
    // 16 at a time, then a turn of the event loop: node:http finishes an answer in a later
    // tick, and a connection with 128 unfinished answers is refused (lib/respond.ts).
    phases['the whole /status: handler, access line, writing (no parser, no kernel)'] = async () => {
      for (let i = 0; i < count; i += 16) {
        for (let j = i; j < Math.min(i + 16, count); j += 1) {
          const [req, res] = exchange('/api/v1/status', j);
          handler(req, res);
        }
        await new Promise(setImmediate);
      }
    };
    phases['the whole typical search, 16 arriving in one turn (no parser, no kernel)'] = async () => {
      for (let i = 0; i < count; i += 16) {
        const answered: Array<Promise<unknown>> = [];
        for (let j = i; j < Math.min(i + 16, count); j += 1) {
          const [req, res] = exchange(`/api/v1/buchungen?${raw[j]}`, j);
          answered.push(new Promise((resolve) => res.once('close', resolve)));
          handler(req, res);
        }
        await Promise.all(answered);
      }
    };
  }

  // Each phase WARM_UP times to let the compiler settle, then MEASURED times measured; the
  // work around a phase (building the requests) is measured apart and taken out.
  let spentElsewhere = 0;
  const out: Record<string, number> = {};
  const baseline = (): number => {
    const started = cpu();
    requests();
    return cpu() - started;
  };
  for (const [name, phase] of Object.entries(phases)) {
    if (phase === undefined) continue;
    try {
      for (let i = 0; i < WARM_UP; i += 1) await phase();
      spentElsewhere = 0;
      const started = cpu();
      for (let i = 0; i < MEASURED; i += 1) await phase();
      let spent = cpu() - started - spentElsewhere;
      if (name.startsWith('writing') || name.startsWith('the access') || name.startsWith('the whole')) {
        for (let i = 0; i < MEASURED; i += 1) spent -= baseline();
      }
      out[name] = Math.max(0, spent) / (count * MEASURED);
    } catch (error: unknown) {
      // Not in an earlier build; this build has every phase, so an error in one is the bench's.
      if (root === resolve('.')) throw error;
    }
  }
  return out;
}

/**
 * CPU µs of this thread so far (Node ≥ 23.9), else of the process: V8 compiles and collects
 * garbage on threads of its own, which would be counted to whichever phase runs meanwhile.
 */
function cpu(): number {
  const { user, system } =
    (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.() ?? process.cpuUsage();
  return user + system;
}
