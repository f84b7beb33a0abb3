// The body of POST {base}/api/v1/abgleich, validated in docs/API.md's order. A number in the
// body is read from its text, never through a float: the amounts are exact cents as in the
// query string. Untrusted input never throws out of here: the result is a request or a message.

import { dayNumber } from '../days.js';
import { LIMITS, lineMessage, BODY_MESSAGES as MESSAGES } from '../messages.js';
import { CURRENCY, isCalendarDate, parseAmount, parseUnsignedAmount, shorten } from '../query.js';
import { JsonNumber, parseKeepingNumbers, type Twice } from './json-text.js';

/** One bank line, validated; amounts in integer cents in the client's sign convention. */
export interface ReconcileLine {
  /** As sent, or the line's position (1-based) as text. */
  ref: string;
  datum: string;
  /** `datum` as a day number (lib/days.ts). */
  day: number;
  betragCents: number;
  /** Bookings from `datum − tage` to `datum + tage` qualify. */
  tage: number;
  toleranzCents: number;
  /** `vorzeichen: "beide"`: a booking of the opposite sign qualifies too. */
  beide: boolean;
  teile: number;
  /** The payment methods for this line, or `undefined`: the request's. */
  konten: readonly string[] | undefined;
}

export interface ReconcileRequest {
  lines: ReconcileLine[];
  /** Booking ids that are never candidates. */
  ausser: ReadonlySet<number>;
  /** Only bookings with one of these payment methods qualify; `undefined`: every booking. */
  konten: readonly string[] | undefined;
  /** As sent; only exactly `EUR` can match. */
  waehrung: string;
}

export type BodyParseResult = { ok: true; request: ReconcileRequest } | { ok: false; message: string };

// docs/API.md, the body's fields in table order.
export const BODY_FIELDS = ['zeilen', 'ausser', 'konten', 'waehrung'] as const;
export const LINE_FIELDS = ['ref', 'datum', 'betrag', 'tage', 'toleranz', 'vorzeichen', 'teile', 'konten'] as const;
const { lines: MAX_LINES, excluded: MAX_EXCLUDED, methods: MAX_METHODS, refCharacters: MAX_REF_CHARACTERS } = LIMITS;
const { days: MAX_DAYS, parts: MAX_PARTS } = LIMITS;
const DEFAULT_DAYS = 3;
// A JSON integer's text (RFC 8259 §6, without fraction and exponent), at most 16 digits.
const INTEGER = /^-?(?:0|[1-9][0-9]{0,15})$/;

// Bytes that are not UTF-8 are a bad body; a byte order mark before the text is passed over
// (RFC 8259 §8.1 lets a parser ignore it).
const DECODER = new TextDecoder('utf-8', { fatal: true });

/** Parses and validates the body (its bytes as received, UTF-8). */
export function parseReconcileBody(body: Uint8Array): BodyParseResult {
  let json: unknown;
  let twice: Twice | undefined;
  try {
    ({ json, twice } = parseKeepingNumbers(DECODER.decode(body)));
  } catch {
    return fail(MESSAGES.badJson);
  }
  // A field given twice is a client's bug that JSON.parse would hide (the last one wins).
  if (twice !== undefined) {
    const text = MESSAGES.twice(shorten(twice.name));
    return fail(twice.line === undefined ? text : lineMessage(twice.line, text));
  }
  if (!isObject(json)) return fail(MESSAGES.notObject);
  const unknown = unknownField(json, BODY_FIELDS);
  if (unknown !== undefined) return fail(MESSAGES.unknown(unknown));

  const zeilen = json['zeilen'];
  if (zeilen === undefined) return fail(MESSAGES.missing('zeilen'));
  if (!Array.isArray(zeilen) || zeilen.length < 1 || zeilen.length > MAX_LINES) return fail(MESSAGES.zeilen);
  const lines: ReconcileLine[] = [];
  for (let i = 0; i < zeilen.length; i += 1) {
    const line = parseLine(zeilen[i], i + 1);
    if (typeof line === 'string') return fail(lineMessage(i + 1, line));
    lines.push(line);
  }

  const ausser = json['ausser'] === undefined ? new Set<number>() : idsOf(json['ausser']);
  if (ausser === undefined) return fail(MESSAGES.ausser);
  const konten = json['konten'] === undefined ? undefined : namesOf(json['konten']);
  if (konten === null) return fail(MESSAGES.konten);
  const waehrung = json['waehrung'] === undefined ? 'EUR' : json['waehrung'];
  if (typeof waehrung !== 'string' || !CURRENCY.test(waehrung)) return fail(MESSAGES.waehrung);
  return { ok: true, request: { lines, ausser, konten, waehrung } };
}

/** One line, or the message (without its `Zeile N: `) of its first error. */
function parseLine(value: unknown, position: number): ReconcileLine | string {
  if (!isObject(value)) return MESSAGES.lineNotObject;
  const unknown = unknownField(value, LINE_FIELDS);
  if (unknown !== undefined) return MESSAGES.unknown(unknown);

  // An absent field takes its default; `null` is a value like any other, refused for its type.
  const ref = value['ref'] === undefined ? String(position) : value['ref'];
  if (typeof ref !== 'string' || codePoints(ref) > MAX_REF_CHARACTERS) return MESSAGES.ref;

  const datum = value['datum'];
  if (datum === undefined) return MESSAGES.missing('datum');
  if (typeof datum !== 'string' || !isCalendarDate(datum)) return MESSAGES.datum;

  if (value['betrag'] === undefined) return MESSAGES.missing('betrag');
  const betragCents = amountOf(value['betrag'], true);
  if (betragCents === undefined) return MESSAGES.betrag;

  const tage = value['tage'] === undefined ? DEFAULT_DAYS : integerOf(value['tage'], 0, MAX_DAYS);
  if (tage === undefined) return MESSAGES.tage;

  const toleranzCents = value['toleranz'] === undefined ? 0 : amountOf(value['toleranz'], false);
  if (toleranzCents === undefined) return MESSAGES.toleranz;

  const vorzeichen = value['vorzeichen'] === undefined ? 'gleich' : value['vorzeichen'];
  if (vorzeichen !== 'gleich' && vorzeichen !== 'beide') return MESSAGES.vorzeichen;

  const teile = value['teile'] === undefined ? 1 : integerOf(value['teile'], 1, MAX_PARTS);
  if (teile === undefined) return MESSAGES.teile;

  const konten = value['konten'] === undefined ? undefined : namesOf(value['konten']);
  if (konten === null) return MESSAGES.konten;

  return {
    ref,
    datum,
    day: dayNumber(datum),
    betragCents,
    tage,
    toleranzCents,
    beide: vorzeichen === 'beide',
    teile,
    konten,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof JsonNumber);
}

/** The first key of `object` not in `known`, cut for a message, or `undefined`. */
function unknownField(object: Record<string, unknown>, known: readonly string[]): string | undefined {
  for (const key of Object.keys(object)) if (!known.includes(key)) return shorten(key);
  return undefined;
}

/**
 * An amount as a JSON string in the query's format, or a JSON number with at most two decimals.
 * Unsigned, a string has no sign, as in the query; a number is ≥ 0 by value, as a schema's
 * `minimum` compares it, so `-0` is 0.
 */
function amountOf(value: unknown, signed: boolean): number | undefined {
  if (typeof value === 'string') return signed ? parseAmount(value) : parseUnsignedAmount(value);
  if (!(value instanceof JsonNumber)) return undefined;
  // A JSON number's text has no `+` and no `,`; an exponent fails the amount's format.
  const cents = parseAmount(value.text);
  return signed || cents === undefined || cents >= 0 ? cents : undefined;
}

function integerOf(value: unknown, min: number, max: number): number | undefined {
  if (!(value instanceof JsonNumber) || !INTEGER.test(value.text)) return undefined;
  const number = Number(value.text);
  return Number.isSafeInteger(number) && number >= min && number <= max ? number : undefined;
}

/** Up to MAX_EXCLUDED safe integers, or `undefined`. */
function idsOf(value: unknown): Set<number> | undefined {
  if (!Array.isArray(value) || value.length > MAX_EXCLUDED) return undefined;
  const ids = new Set<number>();
  for (const item of value) {
    const id = integerOf(item, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    if (id === undefined) return undefined;
    ids.add(id);
  }
  return ids;
}

/** Up to MAX_METHODS texts, or `null`. */
function namesOf(value: unknown): string[] | null {
  if (!Array.isArray(value) || value.length > MAX_METHODS) return null;
  return value.every((name) => typeof name === 'string') ? (value as string[]) : null;
}

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

function fail(message: string): BodyParseResult {
  return { ok: false, message };
}
