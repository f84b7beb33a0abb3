// The launcher: reads argv and the environment, opens the database read-only, creates
// the server and listens. Every failure ends in one line on stderr and a non-zero exit.

import Database from 'better-sqlite3';
import { readFileSync, statSync } from 'node:fs';
import cluster from 'node:cluster';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHandler } from '../lib/index.js';
import { findSchemaProblems } from '../lib/schema.js';
import type { RequestHandler } from '../lib/types.js';
import { CliError, describeFsError, parseCommandLine, USAGE, type ServeCommand } from './args.js';
import { createDemoDatabase } from './demo.js';
import { reportFailure, reportListening, superviseWorkers } from './workers.js';

const NAME = 'booking-search-server';
// A search waits this long for another program's write lock before it answers 500 with
// Retry-After; better-sqlite3's default of 5 s would block every other request meanwhile.
const BUSY_TIMEOUT_MS = 100;
// After SIGINT/SIGTERM, requests in flight get this long before their connections are cut.
const SHUTDOWN_GRACE_MS = 10_000;

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  try {
    const command = parseCommandLine(argv, env);
    if (command.command === 'help') return void process.stdout.write(USAGE);
    if (command.command === 'version') return void process.stdout.write(`${readVersion()}\n`);
    if (command.workers > 1 && cluster.isPrimary) return await superviseWorkers(command, () => checkDatabaseFile(command));
    const greeting = await serve(command);
    if (cluster.isWorker) reportListening(greeting);
    else process.stdout.write(`${greeting.join('\n')}\n`);
  } catch (error: unknown) {
    const message = error instanceof CliError ? error.message : `unexpected error: ${String(error)}`;
    if (cluster.isWorker) return reportFailure(message);
    process.stderr.write(`${NAME}: ${message}\n`);
    process.exitCode = error instanceof CliError ? error.exitCode : 1;
  }
}

/** Opens, checks and serves; returns the lines that tell the user where and what. */
async function serve(command: ServeCommand): Promise<string[]> {
  const demo = command.db === undefined ? createDemoDatabase() : undefined;
  const db = demo?.db ?? openReadOnly(command.db ?? '');
  let handler: RequestHandler;
  try {
    handler = createHandler(db, command.credentials, {
      basePath: command.basePath,
      serviceName: command.serviceName,
      maxAuthFailures: command.maxAuthFailures,
      authFailureWindowMs: command.authFailureWindowMs,
      trustProxy: command.trustProxy,
      onError: logError,
    });
  } catch (error: unknown) {
    db.close();
    throw new CliError(describeDatabaseError(command.db, error));
  }

  const server = createServer({ maxHeaderSize: 16 * 1024 }, withAccessLog(handler));
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  try {
    await listen(server, command.port, command.host);
  } catch (error: unknown) {
    db.close();
    throw new CliError(describeListenError(error, command));
  }
  stopOnSignals(server, db);

  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : command.port;
  const host = command.host.includes(':') ? `[${command.host}]` : command.host;
  const api = `http://${host}:${port}${command.basePath.replace(/\/+$/, '')}/api/v1/`;
  const lines = [`${NAME} listening on ${api}`];
  if (command.workers > 1) lines.push(`Serving from ${command.workers} worker processes, each with its own read-only connection.`);
  if (demo !== undefined) {
    const { username, password } = command.credentials;
    const userArgument = command.credentialsFrom === 'demo default' ? `${username}:${password}` : '"$BOOKING_SEARCH_USER:$BOOKING_SEARCH_PASSWORD"';
    lines.push(
      `Demo: ${demo.count} sample cash bookings from ${demo.from} to ${demo.to}, in memory.`,
      command.credentialsFrom === 'demo default'
        ? 'Demo credentials: user "demo", password "demo" (set BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD for others).'
        : `Credentials: from the ${command.credentialsFrom}.`,
      `Try: curl -u ${userArgument} '${api}buchungen?von=${demo.example.von}&bis=${demo.example.bis}&betrag=${demo.example.betrag}'`,
    );
  }
  return lines;
}

/** Before any worker starts: the file's problems, said once rather than once per worker. */
function checkDatabaseFile(command: ServeCommand): void {
  if (command.db === undefined) return;
  const db = openReadOnly(command.db);
  try {
    const problems = findSchemaProblems(db);
    if (problems.length > 0) throw new CliError(`cannot serve ${command.db}: db does not fit the schema: ${problems.join('; ')}`);
  } catch (error: unknown) {
    throw error instanceof CliError ? error : new CliError(describeDatabaseError(command.db, error));
  } finally {
    db.close();
  }
}

function openReadOnly(file: string): Database.Database {
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch (error: unknown) {
    throw new CliError(`cannot open database ${file}: ${describeFsError(error)}`);
  }
  if (!isFile) throw new CliError(`cannot open database ${file}: not a regular file`);
  try {
    return new Database(file, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  } catch (error: unknown) {
    throw new CliError(`cannot open database ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function describeDatabaseError(file: string | undefined, error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'SQLITE_NOTADB') return `${file} is not a SQLite database`;
  return file === undefined ? message : `cannot serve ${file}: ${message}`;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function describeListenError(error: unknown, { host, port }: ServeCommand): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') return `port ${port} on ${host} is already in use`;
  if (code === 'EACCES') return `no permission to listen on port ${port} (ports below 1024 need privileges)`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot listen on ${host}: no such address on this machine`;
  return `cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`;
}

/** One line per request on stdout: time, method, path (never the query), status, duration. */
function withAccessLog(handler: RequestHandler) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const path = (req.url ?? '').split('?', 1)[0];
      const status = res.writableFinished ? String(res.statusCode) : 'aborted';
      process.stdout.write(`${new Date().toISOString()} ${req.method} ${path} ${status} ${ms.toFixed(1)}ms\n`);
    });
    handler(req, res);
  };
}

function logError(error: unknown, req: IncomingMessage): void {
  const path = (req.url ?? '').split('?', 1)[0];
  const cause = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  process.stderr.write(`${new Date().toISOString()} error in ${req.method} ${path}: ${cause}\n`);
}

function stopOnSignals(server: Server, db: Database.Database): void {
  let stopping = false;
  const stop = (): void => {
    if (stopping) return void server.closeAllConnections();
    stopping = true;
    server.close(() => {
      db.close();
      process.exitCode = 0;
      // A worker's channel to the primary would keep it alive.
      if (cluster.isWorker) process.disconnect();
    });
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

function readVersion(): string {
  const manifest = readFileSync(new URL(import.meta.resolve('booking-search-server/package.json')), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}
