// A JSON text parsed so that each number keeps its text (never a float: amounts are exact
// cents) and a key given twice in one object is found rather than silently dropped.

/** docs/API.md: arrays and objects nested deeper are refused as not valid JSON, before any of it is walked. */
export const MAX_DEPTH = 64;
/**
 * docs/API.md: a body with more numbers is refused as not valid JSON, before they are walked.
 * A valid body holds at most 14,000 (4 a line, 10,000 ids in `ausser`); this leaves a client
 * that sends too many ids the message that says so, and bounds the walk of a 1 MiB body.
 */
export const MAX_NUMBERS = 100_000;
/**
 * docs/API.md: likewise a body of more objects and arrays. A valid one holds at most 2,004
 * (the body, its lines, their `konten`); this leaves a whole year's statement sent at once
 * the message that it has too many lines.
 */
export const MAX_CONTAINERS = 50_000;

/** A JSON number as its text in the body (as the scan found it), so that it is never a float. */
export class JsonNumber {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** The first key given twice in one object, and the line (1-based) it stands in, if any. */
export interface Twice {
  name: string;
  line: number | undefined;
}

/**
 * JSON.parse, each number as a JsonNumber of its text. The texts are found by one scan of
 * the body and given to the numbers of the parsed value in the order they stand: the walk
 * takes each object's keys in the text's order, which the scan keeps (JavaScript puts a key
 * such as "7" first), so that no reviver is needed (JSON.parse's costs several times as much).
 */
export function parseKeepingNumbers(text: string): { json: unknown; twice: Twice | undefined } {
  // The scan first: a body past a bound is refused before JSON.parse builds it.
  const { texts, objects, twice } = scan(text);
  const parsed: unknown = JSON.parse(text);
  if (twice !== undefined) return { json: parsed, twice };
  let next = 0;
  let nextObject = 0;
  const walk = (value: unknown): unknown => {
    if (typeof value === 'number') return new JsonNumber(texts[next++] ?? '');
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i += 1) value[i] = walk(value[i]);
    } else if (typeof value === 'object' && value !== null) {
      const object = value as Record<string, unknown>;
      for (const key of objects[nextObject++] ?? NO_KEYS) object[key] = walk(object[key]);
    }
    return value;
  };
  return { json: walk(parsed), twice };
}

/** An open object (its keys so far, the last one, its place among the objects) or array (the index of its current item). */
type Open = { keys: Set<string> | undefined; last: string; at: number } | { index: number };

const NO_KEYS: readonly string[] = [];

/**
 * Of a valid JSON text: the text of each number, in order (every token outside a string
 * that starts with `-` or a digit), the keys of each object in the text's order (the objects
 * in the order they open), and the first key given twice in one object. Throws on one nested
 * deeper than `MAX_DEPTH` (walking it would overflow the stack), with over `MAX_NUMBERS`
 * numbers or over `MAX_CONTAINERS` objects and arrays. Of a text that is no JSON, what it
 * finds means nothing: JSON.parse refuses that text.
 */
function scan(text: string): { texts: string[]; objects: Array<Set<string> | undefined>; twice: Twice | undefined } {
  const texts: string[] = [];
  // An object's keys made a set at its first key: an empty object costs no set.
  const objects: Array<Set<string> | undefined> = [];
  const open: Open[] = [];
  let containers = 0;
  let twice: Twice | undefined;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      let escaped = false;
      i += 1;
      while (i < text.length && text.charCodeAt(i) !== QUOTE) {
        if (text.charCodeAt(i) === BACKSLASH) escaped = true;
        i += text.charCodeAt(i) === BACKSLASH ? 2 : 1;
      }
      i += 1;
      const end = i;
      // Only a string with an escape needs JSON.parse to be read.
      const read = escaped ? (JSON.parse(text.slice(start, end)) as string) : undefined;
      // `\ud800` alone, half a surrogate pair, is no character: not UTF-8 text (RFC 8259 §8.2),
      // and a client's strict decoder would refuse the answer that repeats it (`ref`).
      if (read !== undefined && HALF_PAIR.test(read)) throw new SyntaxError('half a surrogate pair');
      while (isWhitespace(text.charCodeAt(i))) i += 1;
      if (text.charCodeAt(i) !== COLON) continue;
      const object = open.at(-1);
      if (object === undefined || !('keys' in object)) continue;
      object.last = read ?? text.slice(start + 1, end - 1);
      object.keys ??= objects[object.at] = new Set();
      if (object.keys.has(object.last) && twice === undefined) twice = { name: object.last, line: lineOf(open) };
      object.keys.add(object.last);
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const start = i;
      while (i < text.length && isNumberCharacter(text.charCodeAt(i))) i += 1;
      if (texts.push(text.slice(start, i)) > MAX_NUMBERS) throw new RangeError(`more than ${MAX_NUMBERS} numbers`);
    } else {
      if ((c === OPEN_OBJECT || c === OPEN_ARRAY) && ++containers > MAX_CONTAINERS)
        throw new RangeError(`more than ${MAX_CONTAINERS} objects and arrays`);
      if (c === OPEN_OBJECT) open.push({ keys: undefined, last: '', at: objects.push(undefined) - 1 });
      else if (c === OPEN_ARRAY) open.push({ index: 0 });
      if (open.length > MAX_DEPTH) throw new RangeError(`nested deeper than ${MAX_DEPTH}`);
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) open.pop();
      else if (c === COMMA) {
        const array = open.at(-1);
        if (array !== undefined && 'index' in array) array.index += 1;
      }
      i += 1;
    }
  }
  return { texts, objects, twice };
}

/** The line (1-based) of `zeilen` the innermost object of `open` stands in, if it is one. */
function lineOf(open: readonly Open[]): number | undefined {
  const [body, lines, line] = open;
  if (open.length !== 3 || body === undefined || !('keys' in body) || body.last !== 'zeilen') return undefined;
  return lines !== undefined && 'index' in lines && line !== undefined && 'keys' in line ? lines.index + 1 : undefined;
}

const HALF_PAIR = /\p{Cs}/u;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** One of `-+0123456789.eE`: a character of a JSON number. */
function isNumberCharacter(c: number): boolean {
  return (c >= ZERO && c <= NINE) || c === MINUS || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}
