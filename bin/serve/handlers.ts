// How the command turns a book into its handler, and what the handlers of this process
// share: one login throttle and one bound on password-hash checks for every book, the
// answer for a path that names no book, the options every handler takes from the settings.

import type { RequestListener } from 'node:http';
import type Database from 'better-sqlite3';
import { buildSharedParts, createHandler, type HandlerOptions, Metrics } from '../../lib/internal.js';
import { logError } from '../base/index.js';
import { type BuildHandler, createEmptyBook, orNobody } from '../books/index.js';
import { countsInPrimary, type Role } from '../cluster/index.js';
import { type BookConfig, handlerOptions, type ServeCommand } from '../config/index.js';
import { NO_SEARCH } from '../files/index.js';

/** What every handler of this process shares: createHandler's last argument. */
type SharedParts = NonNullable<Parameters<typeof createHandler>[3]>;

/**
 * The answer for a path that names no book (docs/API.md, Books): a login with any user of
 * the service, then 404. A handler over an empty in-memory book, created with `basePath`,
 * one of the books', so that its own two paths always go to that book instead.
 */
export function fallbackHandler(
  command: ServeCommand,
  basePath: string,
  credentials: readonly ServeCommand['credentials'][number][],
  shared: SharedParts,
): RequestListener {
  const db = emptyBook();
  return createHandler(
    db,
    [...credentials],
    {
      ...serviceOptions(command),
      basePath,
      serviceName: command.settings.name,
      onError: logError,
    },
    shared,
  );
}

let emptyDatabase: Database.Database | undefined;
/** One in-memory database with the own schema and no booking, for every fallback. */
function emptyBook(): Database.Database {
  emptyDatabase ??= createEmptyBook();
  return emptyDatabase;
}

/**
 * How this command turns `book`'s database into its handler for `users`. Without an app,
 * the file's tables say whose they are (`recognised` hears it), as `check` recognises them.
 * A book is named in /status and the realm by its name (--name for the book of --db).
 */
export function handlerFor(
  command: ServeCommand,
  book: BookConfig,
  users: () => readonly ServeCommand['credentials'][number][],
  recognised: (app: string) => void,
  shared: SharedParts = {},
): BuildHandler {
  // One authenticator for every handler of the book: a client verified before its file was
  // replaced, or while a stand-in answered, is not checked again (half a second of CPU).
  const logins = {};
  const handler: BuildHandler = (search, app, onError, standIn = false) => {
    // The stand-in that answers while the file cannot be served says no application.
    if (!standIn && book.app === undefined) recognised(app);
    const options = {
      ...serviceOptions(command),
      basePath: book.basePath,
      serviceName: book.name,
      onError,
    };
    return createHandler(search, [...orNobody(users())], options, { ...shared, logins });
  };
  const { metrics } = shared;
  // A read of a book's file without a client's search (NO_SEARCH) is no search's wait.
  if (metrics !== undefined)
    handler.waited = (seconds, request) => request === NO_SEARCH || metrics.countSearchWait(seconds);
  return handler;
}

/**
 * What every handler of this process shares (lib/handler.ts, SharedParts): one login
 * throttle, so that its budgets hold for the service as a whole, across books, a file's
 * replacements and, with --workers, the workers (the counts in the primary,
 * lib/throttle-authority.ts); one bound on password-hash checks; and, with an admin
 * listener, where they count for /metrics.
 */
export function sharedParts(command: ServeCommand, role: Exclude<Role, 'primary'>): SharedParts {
  const metrics = command.admin === undefined ? undefined : new Metrics();
  const options = serviceOptions(command);
  if (role !== 'worker') return buildSharedParts(options, metrics);
  return buildSharedParts(options, metrics, countsInPrimary());
}

/** The options every handler of the service shares: the throttle's limits, proxies, CORS (bin/config/settings.ts says which). */
function serviceOptions(command: ServeCommand): HandlerOptions {
  return { ...handlerOptions(command.settings), trustProxy: command.trustProxy };
}
