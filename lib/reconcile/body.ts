// The body of POST {base}/api/v1/abgleich, validated in docs/API.md's order. A number in the
// body is read from its text, never through a float: the amounts are exact cents as in the
// query string. Untrusted input never throws out of here: the result is a request or a message.

import { lineMessage, BODY_MESSAGES as MESSAGES } from '../messages.js';
import { parseAmount, parseUnsignedAmount } from '../money.js';
import { CURRENCY, isCalendarDate, shorten } from '../query.js';
import { dayNumber } from './days.js';

/** One bank line, validated; amounts in integer cents in the client's sign convention. */
export interface ReconcileLine {
  /** As sent, or the line's position (1-based) as text. */
  ref: string;
  datum: string;
  /** `datum` as a day number (lib/reconcile/days.ts). */
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
export const MAX_LINES = 1000;
export const MAX_EXCLUDED = 10_000;
export const MAX_METHODS = 100;
const MAX_REF_CHARACTERS = 200;
const MAX_DAYS = 366;
const MAX_PARTS = 3;
const DEFAULT_DAYS = 3;
// A JSON integer's text (RFC 8259 §6, without fraction and exponent), at most 16 digits.
const INTEGER = /^-?(?:0|[1-9][0-9]{0,15})$/;

/** A JSON number as its text in the body (the reviver's source), so that it is never a float. */
class JsonNumber {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

const DECODER = new TextDecoder('utf-8', { fatal: true });

/** Parses and validates the body (its bytes as received, UTF-8). */
export function parseReconcileBody(body: Uint8Array): BodyParseResult {
  let json: unknown;
  try {
    json = parseKeepingNumbers(DECODER.decode(body));
  } catch {
    return fail(MESSAGES.badJson);
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

  const ref = value['ref'] ?? String(position);
  if (typeof ref !== 'string' || codePoints(ref) > MAX_REF_CHARACTERS) return MESSAGES.ref;

  const datum = value['datum'];
  if (datum === undefined) return MESSAGES.missing('datum');
  if (typeof datum !== 'string' || !isCalendarDate(datum)) return MESSAGES.datum;

  if (value['betrag'] === undefined) return MESSAGES.missing('betrag');
  const betragCents = amountOf(value['betrag'], parseAmount);
  if (betragCents === undefined) return MESSAGES.betrag;

  const tage = value['tage'] === undefined ? DEFAULT_DAYS : integerOf(value['tage'], 0, MAX_DAYS);
  if (tage === undefined) return MESSAGES.tage;

  const toleranzCents = value['toleranz'] === undefined ? 0 : amountOf(value['toleranz'], parseUnsignedAmount);
  if (toleranzCents === undefined) return MESSAGES.toleranz;

  const vorzeichen = value['vorzeichen'] ?? 'gleich';
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

/**
 * JSON.parse, each number as a JsonNumber of its text. The texts are found by one scan of
 * the body and given to the numbers of the parsed value in the order they stand; where that
 * order is not the text's (a key such as "7", which JavaScript puts first, or a key given
 * twice), the reviver's source text is used instead, which costs several times as much.
 */
function parseKeepingNumbers(text: string): unknown {
  const parsed: unknown = JSON.parse(text);
  const { texts, keys } = scan(text);
  let next = 0;
  let keysSeen = 0;
  const walk = (value: unknown): unknown => {
    if (typeof value === 'number') return new JsonNumber(texts[next++] ?? '');
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i += 1) value[i] = walk(value[i]);
    } else if (typeof value === 'object' && value !== null) {
      const object = value as Record<string, unknown>;
      for (const key of Object.keys(object)) {
        keysSeen += 1;
        if (ARRAY_INDEX.test(key)) throw new OutOfOrder();
        object[key] = walk(object[key]);
      }
    }
    return value;
  };
  try {
    const walked = walk(parsed);
    // As many keys as the text has: none was given twice (JSON.parse keeps one of them).
    if (next === texts.length && keysSeen === keys) return walked;
  } catch (error: unknown) {
    if (!(error instanceof OutOfOrder)) throw error;
  }
  return JSON.parse(text, keepNumberText);
}

class OutOfOrder extends Error {}

// A key JavaScript orders before the others (ECMA-262, OrdinaryOwnPropertyKeys: array indices first).
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

/**
 * Of a valid JSON text: the text of each number, in order (every token outside a string
 * that starts with `-` or a digit), and how many keys it has (strings followed by `:`).
 */
function scan(text: string): { texts: string[]; keys: number } {
  const texts: string[] = [];
  let keys = 0;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i += 1;
      while (i < text.length && text.charCodeAt(i) !== QUOTE) i += text.charCodeAt(i) === BACKSLASH ? 2 : 1;
      i += 1;
      while (WHITESPACE.test(text[i] ?? '')) i += 1;
      if (text.charCodeAt(i) === COLON) keys += 1;
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const start = i;
      while (i < text.length && NUMBER_CHARACTER.test(text[i] as string)) i += 1;
      texts.push(text.slice(start, i));
    } else i += 1;
  }
  return { texts, keys };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const NUMBER_CHARACTER = /[-+0-9.eE]/;
const WHITESPACE = /[ \t\n\r]/;

/** JSON.parse's reviver: a number keeps its text (Node.js 22: the reviver's `context.source`). */
function keepNumberText(this: unknown, _key: string, value: unknown, context?: { source?: string }): unknown {
  return typeof value === 'number' ? new JsonNumber(context?.source ?? String(value)) : value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof JsonNumber);
}

/** The first key of `object` not in `known`, cut for a message, or `undefined`. */
function unknownField(object: Record<string, unknown>, known: readonly string[]): string | undefined {
  for (const key of Object.keys(object)) if (!known.includes(key)) return shorten(key);
  return undefined;
}

/** An amount as a JSON string in the query's format, or a JSON number with at most two decimals. */
function amountOf(value: unknown, parse: (text: string) => number | undefined): number | undefined {
  if (typeof value === 'string') return parse(value);
  // A JSON number's text has no `+` and no `,`; an exponent fails the amount's format.
  if (value instanceof JsonNumber) return parse(value.text);
  return undefined;
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
