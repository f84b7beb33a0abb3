// Arguments of createHandler: defaults applied, misuse thrown at creation time (never on
// the first request), and what the options name resolved once: the mapping, the trusted
// proxies, the CORS headers.

import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { APP_NAMES, findApplication } from './apps/index.js';
import { basePathMisuse, basePathRefusal, normalBasePath } from './base-path.js';
import { type Cors, createCors, originProblem } from './cors.js';
import { ensure } from './errors.js';
import { type Mapping, ownSchema, TABLE_NAME, type TableNames } from './mapping.js';
import { canonicalAddress, type TrustedPeers, UNIX_SOCKET_PEER } from './request.js';
import type { HandlerOptions } from './types.js';

type Filled = { [K in keyof HandlerOptions]-?: Exclude<HandlerOptions[K], undefined> };

/** The options resolved: every default applied, every value checked once, and what they name built. */
export interface Settings extends Omit<Filled, 'app' | 'tables' | 'trustProxy' | 'corsOrigins'> {
  /** Whose tables the file holds, under which names (`app` and `tables`). */
  readonly mapping: Mapping;
  /** The proxies `trustProxy` names. */
  readonly trustedPeers: TrustedPeers;
  /** The CORS headers for `corsOrigins`. */
  readonly cors: Cors;
  /** The names `app` takes: `own` and the applications (lib/apps/), as a command lists them. */
  readonly apps: readonly string[];
}

/**
 * Each option's default: the one place it is written (lib/types.ts and the documents say
 * it; test/unit/settings.test.ts holds them to this, and bin/config/settings.ts shows the command's
 * as resolveOptions fills them in).
 */
export const DEFAULTS = Object.freeze({
  basePath: '',
  serviceName: 'booking-search-server',
  maxAuthFailures: 10,
  maxUserFailures: 50,
  maxGlobalFailures: 100,
  maxUnauthenticated: 100,
  authFailureWindowMs: 60_000,
  maxTrackedAddresses: 10_000,
  maxKnownClients: 1000,
  trustProxy: [] as readonly string[],
  corsOrigins: [] as readonly string[],
  // One core stays free for the event loop; libuv's pool (4 threads) keeps two for other work.
  maxHashChecks: Math.max(1, Math.min(2, availableParallelism() - 1)),
  maxQueuedHashChecks: 128,
  maxVerifiedCredentials: 1000,
  maxWaitingSearches: 64,
  maxUserWaitingSearches: 1024,
  app: 'own',
  tables: {},
} satisfies Record<Exclude<keyof HandlerOptions, 'onError' | 'now'>, unknown>);

/** Every option's name: any other key is a misspelling, a TypeError (JavaScript has no compiler to say so). */
export const OPTION_NAMES: readonly string[] = [...Object.keys(DEFAULTS), 'onError', 'now'];

/** A TypeError unless `options` is an object (or absent) of option names; a misspelt one names the option it spells in another case, or every option. */
function ensureOptionNames(options: unknown): void {
  ensure(options == null || (typeof options === 'object' && !Array.isArray(options)), 'options must be an object');
  for (const key of Object.keys(options ?? {})) {
    const meant = OPTION_NAMES.find((name) => name.toLowerCase() === key.toLowerCase());
    const hint = meant === undefined ? `the options are ${OPTION_NAMES.join(', ')}` : `did you mean ${meant}?`;
    ensure(OPTION_NAMES.includes(key), `options.${key} is not an option; ${hint}`);
  }
}

// The whole-number options and the least each may be, in the order they are checked.
const LEAST = {
  maxAuthFailures: 0,
  authFailureWindowMs: 1,
  maxUserFailures: 0,
  maxGlobalFailures: 0,
  maxUnauthenticated: 0,
  maxTrackedAddresses: 1,
  maxKnownClients: 1,
  maxHashChecks: 1,
  maxQueuedHashChecks: 0,
  maxVerifiedCredentials: 1,
  maxWaitingSearches: 1,
  maxUserWaitingSearches: 1,
} as const satisfies Partial<Record<keyof Filled, number>>;

/** A service's or a book's name: the realm of its challenge, so printable ASCII (RFC 9110 §11.5). */
export const SERVICE_NAME = /^[\x20-\x7E]{1,100}$/;

type TextSetting = 'name' | 'basePath' | 'app' | 'table' | 'origin' | 'proxyAddress';

/**
 * Why `text`, as a command reads it, cannot be `setting`: a service's or a book's name
 * (serviceName), a base path, an app's name, one table's name (of `tables`), a CORS origin, a proxy's address
 * (of `trustProxy`). In words that follow the setting's name (`must be …`, `is not …`);
 * `undefined` when it can. The rules are the ones resolveOptions applies.
 */
function settingProblem(setting: TextSetting, text: string): string | undefined {
  switch (setting) {
    case 'name':
      return SERVICE_NAME.test(text)
        ? undefined
        : `must be 1 to 100 printable ASCII characters (it is the realm of the login), not '${text}'`;
    case 'basePath': {
      const refusal = basePathRefusal(text);
      if (refusal === undefined) return undefined;
      const instead = refusal.instead === '' ? 'leave it out' : `use ${refusal.instead} instead`;
      return `must be a path such as /kasse whose segments hold only ASCII letters, digits, -, ., _ and ~, not '${refusal.given}' (${refusal.reason}); ${instead}`;
    }
    case 'app':
      return APP_NAMES.includes(text) ? undefined : `must be one of ${APP_NAMES.join(', ')}, not '${text}'`;
    case 'table':
      return TABLE_NAME.test(text) ? undefined : 'is not an SQL name such as kasse or temp.kasse';
    case 'origin':
      return originProblem(text);
    case 'proxyAddress':
      return canonicalAddress(text) === undefined ? 'is not an IP address' : undefined;
  }
}

/**
 * Applies the defaults, throws a TypeError naming the first bad option, and resolves the rest.
 * `refuse`: how a command refuses an option it read from text (serviceName, basePath, app, a
 * table's name, a CORS origin, a proxy's address): called with why, in words that follow the
 * setting's name (`must be …`, `is not …`), before any TypeError.
 */
export function resolveOptions(options: HandlerOptions | undefined, refuse?: (problem: string) => never): Settings {
  ensureOptionNames(options);
  if (refuse !== undefined) {
    const problem = textProblem(options ?? {});
    if (problem !== undefined) refuse(problem);
  }
  // Apply defaults
  const { app, tables, trustProxy, corsOrigins, ...settings }: Filled = {
    ...DEFAULTS,
    onError: writeToStderr,
    now: Date.now,
    ...withoutUndefined(options ?? {}),
  };

  // Validate
  ensure(typeof settings.basePath === 'string', 'options.basePath must be a string such as "/kasse"');
  const basePath = normalBasePath(settings.basePath);
  ensure(basePath !== undefined, basePathMisuse('options.basePath', settings.basePath));
  ensure(
    typeof settings.serviceName === 'string' && SERVICE_NAME.test(settings.serviceName),
    'options.serviceName must be 1 to 100 printable ASCII characters',
  );
  ensure(typeof settings.onError === 'function', 'options.onError must be a function');
  for (const [name, min] of Object.entries(LEAST) as Array<[keyof typeof LEAST, number]>) {
    ensure(isWhole(settings[name], min), `options.${name} must be a whole number ≥ ${min}`);
  }
  ensure(typeof settings.now === 'function', 'options.now must be a function');

  // Interpret: each of these is checked as it is built, once.
  return {
    ...settings,
    basePath,
    trustedPeers: trustedPeers(trustProxy),
    cors: createCors(corsOrigins),
    mapping: resolveMapping(app, tables),
    apps: APP_NAMES,
  };
}

/** The first option given as text that settingProblem refuses, in its words. */
function textProblem(options: HandlerOptions): string | undefined {
  const judged: Array<readonly [TextSetting, unknown]> = [
    ['name', options.serviceName],
    ['basePath', options.basePath],
    ['app', options.app],
    ...Object.values(options.tables ?? {}).map((name) => ['table', name] as const),
    ...(options.corsOrigins ?? []).map((origin) => ['origin', origin] as const),
    ...(options.trustProxy || []).map((address) => ['proxyAddress', address] as const),
  ];
  for (const [setting, text] of judged) {
    const problem = typeof text === 'string' ? settingProblem(setting, text) : undefined;
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** The mapping `app` and `tables` name; throws a TypeError naming the option that is wrong. */
function resolveMapping(app: unknown, tables: unknown): Mapping {
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

function isWhole(value: unknown, min: number): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min;
}

// `{ basePath: undefined }` means the default, as it does everywhere in JavaScript.
function withoutUndefined(options: HandlerOptions): Partial<Filled> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<Filled>;
}

function writeToStderr(error: unknown, req: IncomingMessage, path: string): void {
  console.error(`booking-search-server: error in ${req.method} ${path}:`, error);
}

/**
 * The proxies `options.trustProxy` names (`false`: none), each entry checked and parsed
 * once; throws a TypeError naming the option and the entry that is wrong. docs/API.md,
 * Throttling: the proxies are named; `true` ("whoever connects") would let any client that
 * reaches the port directly pick its own address.
 */
export function trustedPeers(value: unknown): TrustedPeers {
  ensure(
    value !== true,
    `options.trustProxy must list the proxy's addresses, e.g. ["127.0.0.1"] (or "${UNIX_SOCKET_PEER}" for a Unix socket); true would trust any client`,
  );
  const entries: unknown = value === false ? [] : value;
  ensure(Array.isArray(entries), 'options.trustProxy must be an array of IP addresses');
  const addresses = new BlockList();
  let unix = false;
  for (const entry of entries as unknown[]) {
    if (entry === UNIX_SOCKET_PEER) {
      unix = true;
      continue;
    }
    const address = typeof entry === 'string' ? canonicalAddress(entry) : undefined;
    ensure(
      address !== undefined,
      `options.trustProxy must hold IP addresses or "${UNIX_SOCKET_PEER}", not ${JSON.stringify(entry)}`,
    );
    addresses.addAddress(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  }
  return { addresses, unix, any: entries.length > 0 };
}
