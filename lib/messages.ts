// Every error a client can receive, in one place: its status, its stable `code` for
// programs and its `fehler` for people (docs/API.md, "Errors", is the contract;
// test/unit/contract.test.ts holds this table, that document and openapi.json together).
// A code, once published, never changes meaning. The bounds a message states are LIMITS',
// which the checks use too.

/** docs/API.md's bounds on a request, each checked where it is read and stated by its message. */
export const LIMITS = Object.freeze({
  /** `limit`: 0 to this. */
  limit: 1000,
  /** The reconciliation's body, in bytes. */
  bodyBytes: 1024 * 1024,
  /** `zeilen`: 1 to this. */
  lines: 1000,
  /** `ref`, in characters (code points). */
  refCharacters: 200,
  /** `tage`: 0 to this. */
  days: 366,
  /** `teile`: 1 to this. */
  parts: 3,
  /** `konten`: at most this many. */
  methods: 100,
  /** `ausser`: at most this many ids. */
  excluded: 10_000,
  /** The most bookings the lines' windows may hold together; a statement over more is sent in parts. */
  windowBookings: 20_000,
  /** The most candidates and combinations of parts one statement may weigh (lib/reconcile/reconcile.ts). */
  weighed: 4_000_000,
});

/** One error answer: the body `{"fehler": …, "code": …}` with its status. */
export interface ApiError {
  readonly status: number;
  readonly code: ErrorCode;
  readonly fehler: string;
  /** The JSON body, written once. */
  readonly body: string;
  /** Whether it ends the connection (`Connection: close`): nothing pipelined after it is read. */
  readonly closes: boolean;
}

function apiError(status: number, code: ErrorCode, fehler: string, closes = false): ApiError {
  return { status, code, fehler, body: JSON.stringify({ fehler, code }), closes };
}

const CLOSES = true;

const THROTTLED_TEXT = 'Zu viele fehlgeschlagene Anmeldeversuche. Bitte später erneut versuchen.';
const SEARCH_FAILED_TEXT = 'Interner Fehler bei der Buchungssuche.';
const BUSY_TEXT = 'Der Dienst ist gerade ausgelastet. Bitte gleich erneut versuchen.';

/** The errors with a fixed text, by the name the code uses. */
export const ERRORS = {
  unauthorized: apiError(401, 'unauthorized', 'Anmeldung erforderlich.'),
  // The login throttle: failed logins from this address, for this username or in all, or
  // requests without credentials from this address.
  loginThrottled: apiError(429, 'login_throttled', THROTTLED_TEXT, CLOSES),
  // Too many password-hash checks waiting: the service is busy, the client did nothing wrong.
  busy: apiError(429, 'busy', BUSY_TEXT),
  // A request waited for its password-hash check until shortly before its connection could
  // time out: answered rather than cut off, the same sentence as `busy`.
  busyTimeout: apiError(503, 'busy_timeout', BUSY_TEXT),
  tooManySearches: apiError(
    429,
    'too_many_searches',
    'Zu viele Suchanfragen in Arbeit. Bitte später erneut versuchen.',
  ),
  // Requests pipelined on one connection whose answers the client has not taken.
  tooManyUnanswered: apiError(
    429,
    'too_many_unanswered',
    'Zu viele Anfragen auf dieser Verbindung, deren Antworten nicht abgeholt wurden. Bitte die Antworten lesen und erneut verbinden.',
    CLOSES,
  ),
  notFound: apiError(404, 'not_found', 'Nicht gefunden.'),
  // The reconciliation's body (POST {base}/api/v1/abgleich).
  unsupportedMediaType: apiError(
    415,
    'unsupported_media_type',
    'Der Inhalt muss JSON sein (application/json).',
    CLOSES,
  ),
  bodyTooLarge: apiError(
    413,
    'body_too_large',
    `Der Inhalt ist zu groß: höchstens ${LIMITS.bodyBytes / 1024 / 1024} MiB.`,
    CLOSES,
  ),
  methodNotAllowed: apiError(405, 'method_not_allowed', 'Methode nicht erlaubt.'),
  searchFailed: apiError(500, 'search_failed', SEARCH_FAILED_TEXT),
  // The file cannot be read now (busy, locked, waiting for its application): the same text,
  // with Retry-After, since it passes by itself.
  databaseUnavailable: apiError(500, 'database_unavailable', SEARCH_FAILED_TEXT),
  internal: apiError(500, 'internal_error', 'Interner Fehler.'),
  // Raised by Node's HTTP parser before a handler runs (and a bad Host or framing, by the handler).
  badRequest: apiError(400, 'bad_request', 'Ungültige Anfrage.', CLOSES),
  headersTooLarge: apiError(431, 'headers_too_large', 'Anfragekopf zu groß.', CLOSES),
  timeout: apiError(408, 'request_timeout', 'Zeitüberschreitung der Anfrage.', CLOSES),
  expectationFailed: apiError(417, 'expectation_failed', 'Erwartung nicht erfüllbar.', CLOSES),
} as const;

/** Every code a client can receive, `bad_query` and `bad_body` (the validators' 400) included. */
export const ERROR_CODES = [
  'bad_query',
  'bad_body',
  'unauthorized',
  'login_throttled',
  'busy',
  'busy_timeout',
  'too_many_searches',
  'too_many_unanswered',
  'not_found',
  'unsupported_media_type',
  'body_too_large',
  'method_not_allowed',
  'search_failed',
  'database_unavailable',
  'internal_error',
  'bad_request',
  'headers_too_large',
  'request_timeout',
  'expectation_failed',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The validator's 400, with one of its messages (QUERY_MESSAGES). */
export function badQuery(fehler: string): ApiError {
  return apiError(400, 'bad_query', fehler);
}

/** The reconciliation body's 400, with one of its messages (BODY_MESSAGES). */
export function badBody(fehler: string): ApiError {
  return apiError(400, 'bad_body', fehler);
}

/** The validator's messages, rules 1–4 of docs/API.md; `name` is the parameter as sent. */
export const QUERY_MESSAGES = {
  badEncoding: 'Die Anfrage enthält ungültig kodierte Zeichen.',
  unknown: (name: string) => `Unbekannter Parameter '${name}'.`,
  repeated: (name: string) => `Parameter '${name}' darf nur einmal angegeben werden.`,
  missing: (name: string) => `Parameter '${name}' fehlt.`,
  date: (name: string) => `Parameter '${name}' muss ein gültiges Datum im Format JJJJ-MM-TT sein.`,
  betrag: "Parameter 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein.",
  toleranz: "Parameter 'toleranz' muss ein nicht negativer Betrag mit höchstens zwei Nachkommastellen sein.",
  waehrung: "Parameter 'waehrung' muss ein dreistelliger Währungscode sein.",
  limit: `Parameter 'limit' muss eine ganze Zahl zwischen 0 und ${LIMITS.limit} sein.`,
  range: "Der Zeitraum ist ungültig: 'von' liegt nach 'bis'.",
} as const;

/**
 * The messages of a reconciliation body's 400 (`bad_body`), in the order its checks run
 * (lib/reconcile/body.ts); `NAME` is a field's name as sent. A line's message starts with
 * its position: `Zeile 3: Feld 'betrag' …`.
 */
export const BODY_MESSAGES = {
  badJson: 'Der Inhalt ist kein gültiges JSON in UTF-8.',
  twice: (name: string) => `Feld '${name}' ist doppelt angegeben.`,
  notObject: 'Der Inhalt muss ein JSON-Objekt sein.',
  unknown: (name: string) => `Unbekanntes Feld '${name}'.`,
  missing: (name: string) => `Feld '${name}' fehlt.`,
  zeilen: `Feld 'zeilen' muss eine Liste von 1 bis ${LIMITS.lines} Zeilen sein.`,
  lineNotObject: 'Eine Zeile muss ein JSON-Objekt sein.',
  ref: `Feld 'ref' muss ein Text mit höchstens ${LIMITS.refCharacters} Zeichen sein.`,
  datum: "Feld 'datum' muss ein gültiges Datum im Format JJJJ-MM-TT sein.",
  betrag: "Feld 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein, als Text oder Zahl.",
  tage: `Feld 'tage' muss eine ganze Zahl zwischen 0 und ${LIMITS.days} sein.`,
  toleranz:
    "Feld 'toleranz' muss ein nicht negativer Betrag mit höchstens zwei Nachkommastellen sein, als Text oder Zahl.",
  vorzeichen: 'Feld \'vorzeichen\' muss "gleich" oder "beide" sein.',
  teile: `Feld 'teile' muss eine ganze Zahl zwischen 1 und ${LIMITS.parts} sein.`,
  konten: `Feld 'konten' muss eine Liste von höchstens ${LIMITS.methods} Texten sein.`,
  ausser: `Feld 'ausser' muss eine Liste von höchstens ${LIMITS.excluded} ganzzahligen Buchungs-IDs sein.`,
  waehrung: "Feld 'waehrung' muss ein dreistelliger Währungscode sein.",
  tooManyBookings: `Der Inhalt fragt nach zu vielen Buchungen: die Zeitfenster der Zeilen halten mehr als ${LIMITS.windowBookings}. Bitte den Auszug in Teilen senden.`,
  tooMuchWeighing: `Der Inhalt fragt nach zu vielen Vergleichen: mehr als ${LIMITS.weighed} Kandidaten und Kombinationen von Teilen. Bitte den Auszug in Teilen senden.`,
} as const;

/** A line's message: `Zeile 3: ` before one of BODY_MESSAGES. */
export function lineMessage(line: number, message: string): string {
  return `Zeile ${line}: ${message}`;
}
