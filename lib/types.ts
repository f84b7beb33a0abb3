import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HashChecks } from './hash-checks.js';
import type { ErrorCode } from './messages.js';
import type { Metrics } from './metrics.js';
import type { Throttle } from './throttle.js';

/** A client that presents a plain password (HTTP Basic, RFC 7617). */
export interface PasswordCredentials {
  /** Must not be empty and must not contain a colon (RFC 7617 §2). */
  username: string;
  /** Must not be empty. May contain colons. */
  password: string;
  passwordHash?: undefined;
}

/** A client whose password is known only by its scrypt hash (docs/API.md, Credentials). */
export interface HashedCredentials {
  /** Must not be empty and must not contain a colon (RFC 7617 §2). */
  username: string;
  /**
   * `$scrypt$ln=17,r=8,p=1$<salt>$<hash>` as `booking-search-server hash-password` prints
   * it; parameters at least N=2^17, r=8, p=1 (or an equivalent OWASP row).
   */
  passwordHash: string;
  password?: undefined;
}

/** One client's username and secret: a plain password or a password hash. */
export type Credentials = PasswordCredentials | HashedCredentials;

/** The `credentials` argument: one client's, or a list. */
export type Users = Credentials | readonly Credentials[];

/** Options of `createHandler`. Every option is optional; `undefined` means the default. */
export interface HandlerOptions {
  /**
   * The path part of the client's `base_url`, e.g. `"/kasse"`. The handler answers
   * `{basePath}/api/v1/` (`status`, `buchungen`, `abgleich`). A trailing slash is
   * ignored. Default `""`. Segments of ASCII letters, digits, `-`, `.`, `_` and `~` only
   * (`"/mueller"`, not `"/müller"`, which a client sends percent-encoded), none a dot
   * segment: anything else is a TypeError.
   */
  basePath?: string | undefined;
  /** The `name` in the status response and the realm of the Basic challenge. Default `"booking-search-server"`. */
  serviceName?: string | undefined;
  /**
   * Receives the cause of every 500, the request it happened in and that request's path as
   * a log line may show it (no query). The client only ever sees the fixed message.
   * Default: writes the error to stderr.
   */
  onError?: ((error: unknown, req: IncomingMessage, path: string) => void) | undefined;
  /**
   * Failed authentications from one client address (an IPv6 address counts by its /64)
   * that trigger `429` for that address. `0` turns this off. Default `10`.
   */
  maxAuthFailures?: number | undefined;
  /**
   * Failed authentications for one username, from any address, after which credentials
   * for it are checked only from addresses it logged in from before (`maxKnownClients`);
   * others get `429` until the window ends. `0` turns this off. Default `50` (3,000
   * guesses an hour at most against one username with the default window).
   */
  maxUserFailures?: number | undefined;
  /**
   * Failed authentications in all, for any username from any address, after which only
   * known clients are checked until the window ends. `0` turns this off. Default `100`
   * (6,000 guesses an hour at most in all with the default window).
   */
  maxGlobalFailures?: number | undefined;
  /**
   * Requests without credentials (CORS preflights included) from one client address
   * within the window, not followed by a successful login from it, after which such requests get `429` and their
   * connection is closed (never counted as failures; a login clears the count). A client
   * that asks first without credentials (urllib, `curl --anyauth`) logs in after each
   * one, so it never gets near this. `0` turns this off. Default `100`.
   */
  maxUnauthenticated?: number | undefined;
  /** The window, in milliseconds, in which failures are counted (all of the limits above). Default `60000`. */
  authFailureWindowMs?: number | undefined;
  /**
   * How many client addresses (and, apart, usernames) the throttle counts at most; when
   * full, the oldest that is not blocked is dropped first, so that failures from other
   * addresses never free a blocked one. Blocked addresses are kept apart, up to the
   * same number. Default `10000`.
   */
  maxTrackedAddresses?: number | undefined;
  /**
   * (username, address) pairs that logged in, remembered so that the username's and the
   * global budget never lock them out; the least recent is forgotten first. Default `1000`.
   */
  maxKnownClients?: number | undefined;
  /**
   * The reverse proxies in front of this service: IP addresses (`"127.0.0.1"`, `"::1"`;
   * `::ffff:`-mapped forms count as IPv4) and `"unix"` for a peer on a Unix socket. A
   * request from one of them is counted under the last entry of its `X-Forwarded-For` (the
   * one that proxy appended); any other request under its socket's address, whatever
   * headers it sends. `true` is refused (a TypeError): name the proxy. `false` is `[]`.
   * Default `[]`.
   */
  trustProxy?: readonly string[] | false | undefined;
  /**
   * The origins whose web pages may call the API with credentials (CORS), exactly as a
   * browser sends them: `scheme://host[:port]`, e.g. `"https://buchhaltung.example"`. No
   * path, no wildcard (`"*"` is refused). Default `[]`: CORS off.
   */
  corsOrigins?: readonly string[] | undefined;
  /**
   * Password hashes checked at once, at most; each takes one thread of libuv's pool (of 4
   * by default) and one core for a fraction of a second. Default: one less than the
   * machine's cores, at least 1 and at most 2.
   */
  maxHashChecks?: number | undefined;
  /**
   * Hash checks that may wait for their turn; a request beyond them is answered `429` with
   * `Retry-After: 1` without a check (and is not counted as a failure). Default `128`,
   * above `maxGlobalFailures`, so that the failure budgets, which count a check while
   * it waits, turn a flood away before the queue does. A request still waiting after 10 s,
   * or a second before its socket's idle timeout (`server.setTimeout`), is answered `503`
   * with `Retry-After: 1` rather than left to be cut off.
   */
  maxQueuedHashChecks?: number | undefined;
  /**
   * Verified credentials (username and password, however the header spells them)
   * remembered, so that a client's next request is not hashed again; the oldest is
   * forgotten first. Default `1000`.
   */
  maxVerifiedCredentials?: number | undefined;
  /**
   * Searches of one client address that may wait for their turn (docs/API.md, "Searches,
   * the application's writer and other clients"); a search beyond them is answered `429`
   * with `Retry-After: 1` at once. Default `64`.
   */
  maxWaitingSearches?: number | undefined;
  /**
   * Searches of one authenticated user, from all its addresses together, that may wait for
   * their turn (docs/API.md, "Searches, the application's writer and other clients"); a
   * search beyond them is answered `429` with `Retry-After: 1` at once. Default `1024` (16 addresses' worth).
   */
  maxUserWaitingSearches?: number | undefined;
  /**
   * Whose tables the file holds (docs/applications.md): `"own"` (the schema of docs/API.md,
   * under the names of `tables`), `"actual"` (Actual Budget), `"mmex"` (Money Manager Ex),
   * `"gnucash"` (GnuCash), `"kmymoney"` (KMyMoney), or another name the CLI's `--app` lists. The service reads the application's own tables
   * and needs no object in its file. Default `"own"`.
   */
  app?: string | undefined;
  /**
   * With `app: "own"`: the names under which the file holds the three tables (or views) of
   * docs/API.md, e.g. `{ entries: "bss_entries" }`; an SQL identifier each, optionally after
   * a schema name (`"temp.kasse"`). Default `{ entries: "entries", categories: "categories",
   * paymentMethods: "payment_methods" }`.
   */
  tables?:
    | { entries?: string | undefined; categories?: string | undefined; paymentMethods?: string | undefined }
    | undefined;
  /** The clock, in milliseconds; for tests. Default `Date.now`. */
  now?: (() => number) | undefined;
}

/**
 * What the handlers of one service share, createHandler's last argument: one login throttle,
 * whose budgets then hold for the service as a whole (its books, their fallback; the CLI's
 * stand-ins and workers too), and one bound on password-hash checks. Made by
 * `createSharedParts(options)`, and passed as it is.
 */
export interface SharedParts {
  /** Default: a throttle of the handler's own, over its options. */
  throttle?: Throttle;
  /** Default: the handler's own bound on password-hash checks, over its options. */
  hashChecks?: HashChecks;
  /** Default: nothing is counted. */
  metrics?: Metrics;
  /**
   * Handlers that follow one another over one book (its file replaced, its stand-in while
   * there is none) pass one object, the same each time (an empty one): they then check
   * credentials alike, so that what one verified is not checked again by the next.
   * Default: the handler's own check.
   */
  logins?: object;
}

/** Connect/Express style continuation: called for requests outside `{basePath}/api/`. */
export type Next = (error?: unknown) => void;

/** A plain node:http request handler. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse, next?: Next) => void;

/** What `createHandler` returns: a plain node:http request handler that can take new credentials. */
export interface BookingSearchHandler extends RequestHandler {
  /**
   * Replaces the credentials, checked as `createHandler` checks them (a TypeError, and the
   * old ones stay, when they are unusable). Requests from then on need the new ones;
   * remembered verifications are forgotten when they changed; the throttle table and open
   * connections stay.
   */
  updateCredentials(credentials: Users): void;
}

/** One booking as the client sees it (expenses negative). */
export interface Booking {
  id: number;
  /** `YYYY-MM-DD` */
  datum: string;
  /** Euros in the client's convention: a stored expense of 1250 cents is `-12.5`. */
  betrag: number;
  zweck: string;
  /** Absent when the entry has no category. */
  kategorie?: string;
  /** Absent when the entry has no payment method. */
  konto?: string;
}

/** The body of a successful `GET {base}/api/v1/buchungen`. */
export interface SearchResult {
  /** All matching bookings, regardless of `limit`. */
  anzahl: number;
  /** At most `limit` of them, newest first (date, then id, descending). */
  buchungen: Booking[];
}

/** The body of `GET {base}/api/v1/status`. */
export interface StatusResult {
  name: string;
  version: string;
}

/** The body of every error response. */
export interface ErrorBody {
  /** The text a client shows its user, in German. */
  fehler: string;
  /** What happened, for a program to branch on (docs/API.md, "Errors"); never changes meaning. */
  code: ErrorCode;
}

/**
 * An amount as the reconciliation reads it: a string in the search's `betrag` format
 * (`"-12.60"`, `"-12,6"`) or a JSON number, at most two decimals, never an exponent (send
 * strings when a float serialiser writes the number).
 */
export type Amount = string | number;

/** The body of `POST {base}/api/v1/abgleich`: a bank statement (docs/API.md). */
export interface ReconcileRequest {
  /** 1 to 1000 lines. */
  zeilen: BankLine[];
  /** Booking ids that are never candidates (those the client already matched). */
  ausser?: number[];
  /** Only bookings with one of these `konto` (exact); absent: all, `[]`: none. */
  konten?: string[];
  /** Anything but exactly `"EUR"` gives every line no candidates. Default `"EUR"`. */
  waehrung?: string;
}

/** One line of a bank statement; a field left out takes its default (`null` is refused). */
export interface BankLine {
  /** Given back as it came, at most 200 characters. Default: the line's position (`"1"`). */
  ref?: string;
  /** `YYYY-MM-DD` */
  datum: string;
  /** Expenses negative. */
  betrag: Amount;
  /** Bookings dated `datum ± tage` qualify, 0 to 366. Default `3`. */
  tage?: number;
  /** `betrag ± toleranz`, inclusive; not negative. Default `"0"`. */
  toleranz?: Amount;
  /** `"beide"`: a booking of the opposite sign qualifies too. Default `"gleich"`. */
  vorzeichen?: 'gleich' | 'beide';
  /** Up to that many bookings may sum to `betrag`. Default `1`. */
  teile?: 1 | 2 | 3;
  /** Instead of the request's `konten`. */
  konten?: string[];
}

/** The body of a successful `POST {base}/api/v1/abgleich`. */
export interface ReconcileResult {
  /** One for each line sent, in its order. */
  zeilen: ReconciledLine[];
}

/** What a bank line got. */
export interface ReconciledLine {
  ref: string;
  /** Its booking, or the 2–3 parts that sum to it, newest first; `[]`: none. */
  buchungen: Booking[];
  /** How many single bookings qualified. */
  kandidaten: number;
  /** It got one booking, its only candidate, which no other line had as a candidate. */
  eindeutig: boolean;
  /** Up to three candidates it did not get: least cents apart, then days, then id. */
  alternativen: Booking[];
  /** Present, `false`, only when its window held over 400 possible parts, so none were sought. */
  teile_gesucht?: false;
}
