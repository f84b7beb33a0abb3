import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lineMessage, BODY_MESSAGES as M } from '../../lib/messages.js';
import { parseReconcileBody, type ReconcileRequest } from '../../lib/reconcile/body.js';
import { JsonNumber, MAX_CONTAINERS, MAX_NUMBERS, parseKeepingNumbers } from '../../lib/reconcile/json-text.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const parse = (body: unknown) => parseReconcileBody(bytes(typeof body === 'string' ? body : JSON.stringify(body)));

function request(body: unknown): ReconcileRequest {
  const result = parse(body);
  assert.ok(result.ok, result.ok ? '' : result.message);
  return result.request;
}
function message(body: unknown): string {
  const result = parse(body);
  assert.ok(!result.ok, 'refused');
  return result.message;
}
const line = { datum: '2026-03-14', betrag: '-12.60' };

test('a line with its defaults: ref its position, tage 3, toleranz 0, gleich, one part, the request konten', () => {
  const parsed = request({ zeilen: [line, { ...line, ref: 'x' }] });
  assert.deepEqual(parsed.lines[0], {
    ref: '1',
    datum: '2026-03-14',
    day: 20_526,
    betragCents: -1260,
    tage: 3,
    toleranzCents: 0,
    beide: false,
    teile: 1,
    konten: undefined,
  });
  assert.equal(parsed.lines[1]?.ref, 'x');
  assert.deepEqual([...parsed.ausser], []);
  assert.equal(parsed.konten, undefined);
  assert.equal(parsed.waehrung, 'EUR');
});

test('every field of a line and of the request is read', () => {
  const parsed = request(
    '{"zeilen":[{"ref":"2026-03-14/7","datum":"2024-02-29","betrag":-12.6,"tage":0,"toleranz":0.5,' +
      '"vorzeichen":"beide","teile":3,"konten":["Barkasse"]}],"ausser":[4711,4698,-1],"konten":["Bank"],"waehrung":"eur"}',
  );
  const [first] = parsed.lines;
  assert.equal(first?.betragCents, -1260);
  assert.equal(first?.toleranzCents, 50);
  assert.equal(first?.tage, 0);
  assert.equal(first?.beide, true);
  assert.equal(first?.teile, 3);
  assert.deepEqual(first?.konten, ['Barkasse']);
  assert.deepEqual([...parsed.ausser], [4711, 4698, -1]);
  assert.deepEqual(parsed.konten, ['Bank']);
  assert.equal(parsed.waehrung, 'eur');
});

test('a JSON number is read from its text, exact in cents: 4.35 is 435, never 434.99…', () => {
  const cases: Array<[string, number]> = [
    ['4.35', 435],
    ['-4.35', -435],
    ['0.07', 7],
    ['1.10', 110],
    ['-0', 0],
    ['999999999999.99', 99_999_999_999_999],
    ['"-12,50"', -1250],
    ['"+7"', 700],
  ];
  for (const [text, cents] of cases) {
    const parsed = request(`{"zeilen":[{"datum":"2026-01-01","betrag":${text}}]}`);
    assert.equal(parsed.lines[0]?.betragCents, cents, text);
  }
});

test('an amount with an exponent, three decimals or too many digits is refused, as text or number', () => {
  for (const text of [
    '1e2',
    '1.5E1',
    '4.355',
    '0.30000000000000004',
    '1000000000000',
    '"1 000"',
    '""',
    'true',
    'null',
  ]) {
    assert.equal(message(`{"zeilen":[{"datum":"2026-01-01","betrag":${text}}]}`), lineMessage(1, M.betrag), text);
  }
  assert.equal(message({ zeilen: [{ ...line, toleranz: -1 }] }), lineMessage(1, M.toleranz));
  assert.equal(message({ zeilen: [{ ...line, toleranz: '+1' }] }), lineMessage(1, M.toleranz));
});

test('toleranz: a JSON number -0 is 0 (a schema cannot tell it from 0); a sign in a string is refused, as in the query', () => {
  for (const text of ['-0', '-0.0', '-0.00', '0']) {
    const parsed = request(`{"zeilen":[{"datum":"2026-01-01","betrag":1,"toleranz":${text}}]}`);
    assert.ok(Object.is(parsed.lines[0]?.toleranzCents, 0), text);
  }
  for (const text of ['-0.01', '-0.000', '"-0"', '"-0.00"', '"+0"']) {
    assert.equal(
      message(`{"zeilen":[{"datum":"2026-01-01","betrag":1,"toleranz":${text}}]}`),
      lineMessage(1, M.toleranz),
      text,
    );
  }
});

test('the messages name the line (1-based) and the field, the first error found', () => {
  const cases: Array<[unknown, string]> = [
    ['{"zeilen":', M.badJson],
    // Half a surrogate pair is no character, in a value or a key; a whole pair is one.
    ['{"zeilen":[{"ref":"a\\ud800b","datum":"2026-03-22","betrag":"-4.35"}]}', M.badJson],
    ['{"zeilen":[{"ref":"\\udc00","datum":"2026-03-22","betrag":"-4.35"}]}', M.badJson],
    ['{"zeilen":[{"datum":"2026-03-22","betrag":"-4.35"}],"\\ud83d":1}', M.badJson],
    ['', M.badJson],
    ['[]', M.notObject],
    ['null', M.notObject],
    [{ zeilen: [line], extra: 1 }, M.unknown('extra')],
    [{ extra: 1 }, M.unknown('extra')],
    [{ ['x'.repeat(50)]: 1 }, M.unknown('x'.repeat(40))],
    [{ 'a\u0000\n"b\u2066': 1 }, M.unknown('a��"b�')],
    [{}, M.missing('zeilen')],
    [{ zeilen: [] }, M.zeilen],
    [{ zeilen: line }, M.zeilen],
    [{ zeilen: Array(1001).fill(line) }, M.zeilen],
    [{ zeilen: [line, 7] }, lineMessage(2, M.lineNotObject)],
    [{ zeilen: [line, [line]] }, lineMessage(2, M.lineNotObject)],
    [{ zeilen: [line, line, { ...line, wert: 1, betrag: 'x' }] }, lineMessage(3, M.unknown('wert'))],
    [{ zeilen: [{ ...line, ref: 7 }] }, lineMessage(1, M.ref)],
    [{ zeilen: [{ ...line, ref: 'x'.repeat(201) }] }, lineMessage(1, M.ref)],
    [{ zeilen: [{ betrag: '1' }] }, lineMessage(1, M.missing('datum'))],
    [{ zeilen: [{ datum: '2025-02-29', betrag: '1' }] }, lineMessage(1, M.datum)],
    [{ zeilen: [{ datum: '2025-02-29' }] }, lineMessage(1, M.datum)],
    [{ zeilen: [{ datum: '2025-02-28' }] }, lineMessage(1, M.missing('betrag'))],
    [{ zeilen: [line, line, { ...line, betrag: '12.345' }] }, lineMessage(3, M.betrag)],
    [{ zeilen: [{ ...line, tage: 367 }] }, lineMessage(1, M.tage)],
    [{ zeilen: [{ ...line, tage: -1 }] }, lineMessage(1, M.tage)],
    ['{"zeilen":[{"datum":"2026-01-01","betrag":1,"tage":1.0}]}', lineMessage(1, M.tage)],
    [{ zeilen: [{ ...line, tage: '3' }] }, lineMessage(1, M.tage)],
    [{ zeilen: [{ ...line, vorzeichen: 'andere' }] }, lineMessage(1, M.vorzeichen)],
    [{ zeilen: [{ ...line, teile: 4 }] }, lineMessage(1, M.teile)],
    [{ zeilen: [{ ...line, teile: 0 }] }, lineMessage(1, M.teile)],
    [{ zeilen: [{ ...line, konten: 'Bank' }] }, lineMessage(1, M.konten)],
    [{ zeilen: [{ ...line, konten: [1] }] }, lineMessage(1, M.konten)],
    [{ zeilen: [{ ...line, konten: Array(101).fill('Bank') }] }, lineMessage(1, M.konten)],
    [{ zeilen: [line], ausser: [1.5] }, M.ausser],
    [{ zeilen: [line], ausser: ['1'] }, M.ausser],
    [{ zeilen: [line], ausser: Array(10_001).fill(1) }, M.ausser],
    ['{"zeilen":[{"datum":"2026-01-01","betrag":1}],"ausser":[12345678901234567]}', M.ausser],
    [{ zeilen: [line], konten: [null] }, M.konten],
    [{ zeilen: [line], waehrung: 'EURO' }, M.waehrung],
    [{ zeilen: [line], waehrung: 978 }, M.waehrung],
    // A line's error comes before those of the fields after `zeilen`.
    [{ zeilen: [{ ...line, teile: 9 }], waehrung: 'EURO' }, lineMessage(1, M.teile)],
  ];
  for (const [body, expected] of cases) assert.equal(message(body), expected, JSON.stringify(body).slice(0, 80));
  assert.equal(message({ zeilen: [line], ausser: Array(10_000).fill(1), waehrung: 'x' }), M.waehrung);
});

test('null is no absent field: every field given null gets its message, as for a wrong type', () => {
  const lineFields: Array<[string, string]> = [
    ['ref', M.ref],
    ['datum', M.datum],
    ['betrag', M.betrag],
    ['tage', M.tage],
    ['toleranz', M.toleranz],
    ['vorzeichen', M.vorzeichen],
    ['teile', M.teile],
    ['konten', M.konten],
  ];
  for (const [name, expected] of lineFields) {
    assert.equal(message({ zeilen: [line, { ...line, [name]: null }] }), lineMessage(2, expected), name);
    assert.equal(message({ zeilen: [line, { ...line, [name]: true }] }), lineMessage(2, expected), name);
  }
  const bodyFields: Array<[string, string]> = [
    ['zeilen', M.zeilen],
    ['ausser', M.ausser],
    ['konten', M.konten],
    ['waehrung', M.waehrung],
  ];
  for (const [name, expected] of bodyFields) {
    assert.equal(message({ zeilen: [line], [name]: null }), expected, name);
    assert.equal(message({ zeilen: [line], [name]: true }), expected, name);
  }
  // An empty text is refused where the docs' format needs a character; a ref or an account may be empty.
  for (const name of ['datum', 'betrag', 'toleranz', 'vorzeichen']) {
    assert.match(message({ zeilen: [{ ...line, [name]: '' }] }), new RegExp(`^Zeile 1: Feld '${name}'`), name);
  }
  assert.equal(message({ zeilen: [line], waehrung: '' }), M.waehrung);
  const empty = request({ zeilen: [{ ...line, ref: '', konten: [''] }], konten: [''] });
  assert.deepEqual([empty.lines[0]?.ref, empty.lines[0]?.konten, empty.konten], ['', [''], ['']]);
});

test('a ref of 200 characters counts code points; the body is UTF-8 or refused, a byte order mark before it passed over', () => {
  assert.equal(request({ zeilen: [{ ...line, ref: '€'.repeat(100) + '😀'.repeat(100) }] }).lines[0]?.ref.length, 300);
  assert.deepEqual(parseReconcileBody(new Uint8Array([0x7b, 0xff, 0x7d])), { ok: false, message: M.badJson });
  assert.equal(request(`\uFEFF${JSON.stringify({ zeilen: [line] })}`).lines[0]?.betragCents, -1260);
  assert.deepEqual(parse(`\uFEFF\uFEFF${JSON.stringify({ zeilen: [line] })}`), { ok: false, message: M.badJson });
});

test('number texts are matched to their numbers whatever the key order: keys like "7"', () => {
  const body = (text: string) => parseReconcileBody(bytes(text));
  // Top-level fields in any order, numbers in strings that look like numbers, escaped quotes.
  const mixed = body(
    '{"ausser":[3,-4],"zeilen":[{"ref":"-1 \\" 2.5","datum":"2026-01-01","toleranz":0.05,"betrag":-0.07,"teile":2}]}',
  );
  assert.ok(mixed.ok);
  assert.deepEqual(
    [mixed.request.lines[0]?.ref, mixed.request.lines[0]?.toleranzCents, mixed.request.lines[0]?.betragCents],
    ['-1 " 2.5', 5, -7],
  );
  assert.deepEqual([...mixed.request.ausser], [3, -4]);
  assert.equal(body('{"zeilen":[{"datum":"2026-01-01","betrag":1,"7":2.5}]}').ok, false);
  // Each object's keys walked in the text's order, not JavaScript's (array indices first).
  const { json } = parseKeepingNumbers('{"b":1.50,"7":2.0,"3":[3.10,{"1":4.00,"0":-5e0}],"a":6}');
  const texts = (value: unknown): unknown =>
    value instanceof JsonNumber
      ? value.text
      : typeof value === 'object' && value !== null
        ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, texts(item)]))
        : value;
  assert.deepEqual(texts(json), { b: '1.50', 7: '2.0', 3: { 0: '3.10', 1: { 1: '4.00', 0: '-5e0' } }, a: '6' });
});

test('a body of more than 100,000 numbers or 50,000 objects and arrays is refused as not valid JSON before it is built; up to that, its first error is said', () => {
  const ids = (count: number): string =>
    `{"zeilen":[{"datum":"2026-01-01","betrag":1}],"ausser":[${'7,'.repeat(count - 1)}7]}`;
  assert.equal(MAX_NUMBERS, 100_000);
  assert.equal(message(ids(MAX_NUMBERS - 1)), M.ausser);
  assert.equal(message(ids(MAX_NUMBERS)), M.badJson);
  // The body, `zeilen` and its lines: a year's statement sent whole is told it has too many lines.
  const lines = (count: number): string => `{"zeilen":[${'{},'.repeat(count - 1)}{}]}`;
  assert.equal(MAX_CONTAINERS, 50_000);
  assert.equal(message(lines(MAX_CONTAINERS - 2)), M.zeilen);
  assert.equal(message(lines(MAX_CONTAINERS - 1)), M.badJson);
  assert.equal(message(`{"zeilen":[${'[],'.repeat(MAX_CONTAINERS)}[]]}`), M.badJson);
});

test('a field given twice is refused, naming it and its line, before any other check', () => {
  const body = (text: string) => message(text);
  const twice = M.twice('betrag');
  assert.equal(twice, "Feld 'betrag' ist doppelt angegeben.");
  assert.equal(body('{"zeilen":[{"datum":"2026-01-01","betrag":1.10,"tage":5,"betrag":2.20}]}'), lineMessage(1, twice));
  // Counted by the lines of `zeilen`, past nested lists; an escaped key is the same key.
  assert.equal(
    body(
      '{"zeilen":[{"datum":"x","konten":["a","b"]},{"datum":"2026-01-01","betrag":1,"konten":[],"\\u0062etrag":"x"}]}',
    ),
    lineMessage(2, twice),
  );
  assert.equal(body('{"ausser":[1],"zeilen":[{"datum":"x"}],"ausser":[2]}'), M.twice('ausser'));
  // The same name in two objects is no repetition.
  assert.ok(parse('{"zeilen":[{"datum":"2026-01-01","betrag":1},{"datum":"2026-01-01","betrag":2}]}').ok);
});

test('a body nested deeper than 64 arrays and objects is refused as not valid JSON, however deep', () => {
  const nested = (depth: number): string => `{"zeilen":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
  // 64 deep: read, and refused for its shape.
  assert.equal(message(nested(64)), lineMessage(1, M.lineNotObject));
  for (const depth of [65, 100_000]) assert.equal(message(nested(depth)), M.badJson, `${depth} deep`);
});

test('a whole surrogate pair written as two escapes is one character, kept in ref', () => {
  const parsed = parse('{"zeilen":[{"ref":"\\ud83d\\ude00 \\u00fc","datum":"2026-03-22","betrag":"-4.35"}]}');
  assert.ok(parsed.ok);
  assert.equal(parsed.request.lines[0]?.ref, '😀 ü');
});
