// Arguments of createHandler: defaults applied and misuse thrown at creation time,
// never on the first request.

import type { IncomingMessage } from 'node:http';
import { availableParallelism } from 'node:os';
import type { Database } from 'better-sqlite3';
import { APP_NAMES, findApplication } from './apps/index.js';
import { canonicalAddress, UNIX_SOCKET_PEER } from './client-address.js';
import { validateCorsOrigins } from './cors.js';
import { checkDatabaseHandle } from './database-handle.js';
import { ensure } from './errors.js';
import { type Mapping, ownSchema, TABLE_NAME, type TableNames } from './mapping.js';
import { checkMeaning } from './meaning.js';
import { normalBasePath, pathForLog } from './request-target.js';
import { findSchemaProblems, recogniseOlder, recogniseOther } from './schema.js';
import type { HandlerOptions } from './types.js';

export type Settings = { [K in keyof HandlerOptions]-?: Exclude<HandlerOptions[K], undefined> };

// The name is also the realm of a header, which must stay printable ASCII.
const SERVICE_NAME = /^[\x20-\x7E]{1,100}$/;

/** Applies the defaults and throws a TypeError naming the first bad option. */
export function resolveOptions(options: HandlerOptions | undefined): Settings {
  // Apply defaults
  const settings: Settings = {
    basePath: '',
    serviceName: 'booking-search-server',
    onError: writeToStderr,
    maxAuthFailures: 10,
    maxUserFailures: 50,
    maxGlobalFailures: 100,
    maxUnauthenticated: 100,
    authFailureWindowMs: 60_000,
    maxTrackedAddresses: 10_000,
    maxKnownClients: 1000,
    trustProxy: [],
    corsOrigins: [],
    // One core stays free for the event loop; libuv's pool (4 threads) keeps two for other work.
    maxHashChecks: Math.max(1, Math.min(2, availableParallelism() - 1)),
    maxQueuedHashChecks: 128,
    maxVerifiedCredentials: 1000,
    maxWaitingSearches: 64,
    maxUserWaitingSearches: 1024,
    now: Date.now,
    app: 'own',
    tables: {},
    ...withoutUndefined(options ?? {}),
  };

  // Validate
  ensure(typeof settings.basePath === 'string', 'options.basePath must be a string such as "/kasse"');
  const basePath = normalBasePath(settings.basePath);
  ensure(basePath !== undefined, 'options.basePath must be "" or a path such as "/kasse"');
  settings.basePath = basePath;
  ensure(
    typeof settings.serviceName === 'string' && SERVICE_NAME.test(settings.serviceName),
    'options.serviceName must be 1 to 100 printable ASCII characters',
  );
  ensure(typeof settings.onError === 'function', 'options.onError must be a function');
  ensure(isWhole(settings.maxAuthFailures, 0), 'options.maxAuthFailures must be a whole number ≥ 0');
  ensure(isWhole(settings.authFailureWindowMs, 1), 'options.authFailureWindowMs must be a whole number ≥ 1');
  ensure(isWhole(settings.maxUserFailures, 0), 'options.maxUserFailures must be a whole number ≥ 0');
  ensure(isWhole(settings.maxGlobalFailures, 0), 'options.maxGlobalFailures must be a whole number ≥ 0');
  ensure(isWhole(settings.maxUnauthenticated, 0), 'options.maxUnauthenticated must be a whole number ≥ 0');
  ensure(isWhole(settings.maxTrackedAddresses, 1), 'options.maxTrackedAddresses must be a whole number ≥ 1');
  ensure(isWhole(settings.maxKnownClients, 1), 'options.maxKnownClients must be a whole number ≥ 1');
  settings.trustProxy = validateTrustProxy(settings.trustProxy);
  ensure(isWhole(settings.maxHashChecks, 1), 'options.maxHashChecks must be a whole number ≥ 1');
  ensure(isWhole(settings.maxQueuedHashChecks, 0), 'options.maxQueuedHashChecks must be a whole number ≥ 0');
  ensure(isWhole(settings.maxVerifiedCredentials, 1), 'options.maxVerifiedCredentials must be a whole number ≥ 1');
  ensure(isWhole(settings.maxWaitingSearches, 1), 'options.maxWaitingSearches must be a whole number ≥ 1');
  ensure(isWhole(settings.maxUserWaitingSearches, 1), 'options.maxUserWaitingSearches must be a whole number ≥ 1');
  ensure(typeof settings.now === 'function', 'options.now must be a function');
  settings.corsOrigins = validateCorsOrigins(settings.corsOrigins);
  resolveMapping(settings.app, settings.tables);
  return settings;
}

/** The mapping `app` and `tables` name; throws a TypeError naming the option that is wrong. */
export function resolveMapping(app: unknown, tables: unknown): Mapping {
  ensure(
    typeof app === 'string' && APP_NAMES.includes(app),
    `options.app must be one of ${APP_NAMES.map((name) => `"${name}"`).join(', ')}`,
  );
  ensure(
    typeof tables === 'object' && tables !== null,
    'options.tables must be an object such as { entries: "kasse" }',
  );
  const names: Partial<TableNames> = {};
  for (const [key, value] of Object.entries(tables)) {
    ensure(
      key === 'entries' || key === 'categories' || key === 'paymentMethods',
      `options.tables may name entries, categories and paymentMethods, not ${JSON.stringify(key)}`,
    );
    if (value === undefined) continue;
    ensure(
      typeof value === 'string' && TABLE_NAME.test(value),
      `options.tables.${key} must be an SQL name such as "kasse" or "temp.kasse"`,
    );
    names[key] = value;
  }
  const application = findApplication(app);
  if (application === undefined) return ownSchema(names);
  ensure(Object.keys(names).length === 0, `options.tables is for app "own"; app "${app}" reads its own tables`);
  return application;
}

/**
 * Throws unless `db` is an open better-sqlite3 database (or behaves like one) holding the
 * tables `mapping` reads (docs/API.md's schema by default), whose bookings the search can
 * answer exactly as `check` judges them (lib/meaning.ts).
 */
export function validateDatabase(db: Database | undefined, mapping: Mapping = ownSchema()): Database {
  checkDatabaseHandle(db);
  const problems = findSchemaProblems(db, mapping);
  if (problems.length > 0) {
    const detected = recogniseOther(db, mapping);
    const older = detected === undefined && mapping.kind === 'own' ? recogniseOlder(db) : undefined;
    const hint =
      detected !== undefined
        ? ` (the file has the tables of ${detected.title}: serve it with --app ${detected.name}, or app: "${detected.name}")`
        : older !== undefined
          ? ` (the file has the tables of ${older.title}, but not every column the service reads, as a file of an older version may: check --app ${older.name} names them)`
          : '';
    const what = mapping.kind === 'own' ? 'the schema' : `the tables of ${mapping.title}`;
    throw new Error(`db does not fit ${what}: ${problems.join('; ')}${hint}`);
  }
  // check's own judgement, word for word: the service starts on exactly the files check passes.
  const { problems: wrong } = checkMeaning(db, mapping);
  if (wrong.length > 0) throw new Error(`db cannot be served exactly: ${wrong.join(' ')}`);
  return db;
}

// docs/API.md, Throttling: the proxies are named; `true` ("whoever connects") would let any
// client that reaches the port directly pick its own address.
function validateTrustProxy(value: unknown): readonly string[] {
  if (value === false) return [];
  ensure(
    value !== true,
    `options.trustProxy must list the proxy's addresses, e.g. ["127.0.0.1"] (or "${UNIX_SOCKET_PEER}" for a Unix socket); true would trust any client`,
  );
  ensure(Array.isArray(value), 'options.trustProxy must be an array of IP addresses');
  for (const entry of value as unknown[]) {
    ensure(
      entry === UNIX_SOCKET_PEER || (typeof entry === 'string' && canonicalAddress(entry) !== undefined),
      `options.trustProxy must hold IP addresses or "${UNIX_SOCKET_PEER}", not ${JSON.stringify(entry)}`,
    );
  }
  return value as readonly string[];
}

function isWhole(value: unknown, min: number): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min;
}

// `{ basePath: undefined }` means the default, as it does everywhere in JavaScript.
function withoutUndefined(options: HandlerOptions): Partial<Settings> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<Settings>;
}

function writeToStderr(error: unknown, req: IncomingMessage): void {
  const path = pathForLog(req.url ?? '');
  console.error(`booking-search-server: error in ${req.method} ${path}:`, error);
}
