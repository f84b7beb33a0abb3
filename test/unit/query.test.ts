import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PARAMETERS, parseAmount, parseSearchQuery, parseUnsignedAmount, type SearchQuery } from '../../lib/query.js';

const VALID = 'von=2026-03-01&bis=2026-03-31&betrag=-12.5';

function messageOf(raw: string): string | undefined {
  const result = parseSearchQuery(raw);
  return result.ok ? undefined : result.message;
}

function queryOf(raw: string): SearchQuery {
  const result = parseSearchQuery(raw);
  assert.ok(result.ok, `expected ${raw} to be valid, got ${result.ok ? '' : result.message}`);
  return result.query;
}

test('a minimal query gets the defaults: toleranz 0, waehrung EUR, limit 50', () => {
  assert.deepEqual(queryOf(VALID), {
    von: '2026-03-01',
    bis: '2026-03-31',
    betragCents: -1250,
    toleranzCents: 0,
    waehrung: 'EUR',
    limit: 50,
  });
});

test('every parameter is read, in any order', () => {
  assert.deepEqual(queryOf('limit=0&waehrung=usd&toleranz=0,10&betrag=%2B1,00&bis=2024-02-29&von=2024-02-29'), {
    von: '2024-02-29',
    bis: '2024-02-29',
    betragCents: 100,
    toleranzCents: 10,
    waehrung: 'usd',
    limit: 0,
  });
});

test('form decoding: + is a space, %XX escapes, empty pieces are skipped', () => {
  assert.equal(queryOf('von=2026%2D03%2D01&bis=2026-03-31&betrag=-12.5').von, '2026-03-01');
  assert.equal(queryOf(`&&${VALID}&`).betragCents, -1250);
  // `+` is a space, so `betrag=+5` is ' 5', which is not an amount; `%2B5` is '+5'.
  assert.equal(
    messageOf('von=2026-03-01&bis=2026-03-31&betrag=+5'),
    "Parameter 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein.",
  );
  assert.equal(queryOf('von=2026-03-01&bis=2026-03-31&betrag=%2B5').betragCents, 500);
});

// A value of each parameter that passes its check; a name of PARAMETERS missing here is
// still held below, and fails unless rule 3 reads it.
const GOOD: Record<string, string> = {
  von: '2026-03-01',
  bis: '2026-03-31',
  betrag: '1',
  toleranz: '0',
  waehrung: 'EUR',
  limit: '5',
};

test('every name of PARAMETERS is read, written plain or escaped: a bad value fails with its message', () => {
  const escaped = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
  for (const name of PARAMETERS) {
    const others = Object.entries(GOOD).filter(([other]) => other !== name);
    const rest = others.map(([other, value]) => `${other}=${value}`).join('&');
    const plain = messageOf(`${rest}&${name}=x+y`);
    const encoded = messageOf(`${rest}&${escaped(name)}=x%20y`);
    assert.ok(plain?.includes(`'${name}'`), `${name}=x+y: ${plain}`);
    assert.equal(encoded, plain, name);
  }
});

test('limit accepts 0 to 1000', () => {
  assert.equal(queryOf(`${VALID}&limit=0`).limit, 0);
  assert.equal(queryOf(`${VALID}&limit=1000`).limit, 1000);
  assert.equal(queryOf(`${VALID}&limit=0050`).limit, 50);
});

// docs/API.md, Validation messages: each row is the first failing rule of its query.
const MESSAGES: Array<[query: string, message: string]> = [
  // 1. malformed escapes, before anything else
  ['x=%', 'Die Anfrage enthält ungültig kodierte Zeichen.'],
  [`${VALID}&limit=%4`, 'Die Anfrage enthält ungültig kodierte Zeichen.'],
  [`${VALID}&limit=%G0`, 'Die Anfrage enthält ungültig kodierte Zeichen.'],
  [`unbekannt=1&${VALID}&%zz`, 'Die Anfrage enthält ungültig kodierte Zeichen.'],
  [`${VALID}&zweck=%FF`, 'Die Anfrage enthält ungültig kodierte Zeichen.'], // not UTF-8
  [`${VALID}&zweck=%C3`, 'Die Anfrage enthält ungültig kodierte Zeichen.'], // a cut-off UTF-8 sequence
  // 2. unknown or repeated names, in order of appearance
  [`${VALID}&seite=2`, "Unbekannter Parameter 'seite'."],
  [`Von=2026-03-01&bis=2026-03-31&betrag=1`, "Unbekannter Parameter 'Von'."],
  [`=5&${VALID}`, "Unbekannter Parameter ''."],
  [`${VALID}&${'x'.repeat(50)}=1`, `Unbekannter Parameter '${'x'.repeat(40)}'.`],
  [`${VALID}&${'ü'.repeat(41)}=1`, `Unbekannter Parameter '${'ü'.repeat(40)}'.`],
  [`${VALID}&${'😀'.repeat(41)}=1`, `Unbekannter Parameter '${'😀'.repeat(40)}'.`],
  [`${VALID}&%C3%A4rger=1`, "Unbekannter Parameter 'ärger'."],
  // A control character or a bidirectional override would be shown as is: each as U+FFFD.
  [`${VALID}&a%00%0A%1B%7F%C2%85b%E2%80%AE=1`, "Unbekannter Parameter 'a�����b�'."],
  [`${VALID}&von=2026-03-01`, "Parameter 'von' darf nur einmal angegeben werden."],
  [`${VALID}&limit=1&limit=1&x=1`, "Parameter 'limit' darf nur einmal angegeben werden."],
  [`${VALID}&x=1&limit=1&limit=1`, "Unbekannter Parameter 'x'."],
  ['von=&von=&bis=2026-03-31', "Parameter 'von' darf nur einmal angegeben werden."],
  ['von=kaputt&bis=kaputt&seite=1', "Unbekannter Parameter 'seite'."],
  // 3. missing or malformed, in table order
  ['', "Parameter 'von' fehlt."],
  ['von=&bis=2026-03-31&betrag=1', "Parameter 'von' fehlt."],
  ['von&bis=2026-03-31&betrag=1', "Parameter 'von' fehlt."],
  ['bis=2026-03-31&betrag=1', "Parameter 'von' fehlt."],
  ['von=2026-03-01&betrag=1', "Parameter 'bis' fehlt."],
  ['von=2026-03-01&bis=2026-03-31', "Parameter 'betrag' fehlt."],
  ['von=2026-03-01&bis=2026-03-31&betrag=', "Parameter 'betrag' fehlt."],
  ['von=2025-02-29&bis=2026-03-31&betrag=1', "Parameter 'von' muss ein gültiges Datum im Format JJJJ-MM-TT sein."],
  ['von=2026-3-1&bis=2026-03-31&betrag=1', "Parameter 'von' muss ein gültiges Datum im Format JJJJ-MM-TT sein."],
  ['von=2026-13-01&bis=2026-03-31&betrag=1', "Parameter 'von' muss ein gültiges Datum im Format JJJJ-MM-TT sein."],
  ['von=2026-00-10&bis=2026-03-31&betrag=1', "Parameter 'von' muss ein gültiges Datum im Format JJJJ-MM-TT sein."],
  ['von=2026-04-31&bis=2026-03-31&betrag=1', "Parameter 'von' muss ein gültiges Datum im Format JJJJ-MM-TT sein."],
  ['von=2026-04-00&bis=2026-03-31&betrag=1', "Parameter 'von' muss ein gültiges Datum im Format JJJJ-MM-TT sein."],
  ['von=1900-02-29&bis=2026-03-31&betrag=1', "Parameter 'von' muss ein gültiges Datum im Format JJJJ-MM-TT sein."],
  [
    'von=2026-03-01T00:00&bis=2026-03-31&betrag=1',
    "Parameter 'von' muss ein gültiges Datum im Format JJJJ-MM-TT sein.",
  ],
  ['von=20260301&bis=2026-03-31&betrag=1', "Parameter 'von' muss ein gültiges Datum im Format JJJJ-MM-TT sein."],
  [
    'von=%EF%BC%92026-03-01&bis=2026-03-31&betrag=1',
    "Parameter 'von' muss ein gültiges Datum im Format JJJJ-MM-TT sein.",
  ],
  ['von=kaputt&bis=kaputt&betrag=kaputt', "Parameter 'von' muss ein gültiges Datum im Format JJJJ-MM-TT sein."],
  ['von=2026-03-01&bis=2026-02-30&betrag=1', "Parameter 'bis' muss ein gültiges Datum im Format JJJJ-MM-TT sein."],
  [
    'von=2026-03-01&bis=2026-03-31&betrag=1.234',
    "Parameter 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein.",
  ],
  [
    'von=2026-03-01&bis=2026-03-31&betrag=1e3',
    "Parameter 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein.",
  ],
  [
    'von=2026-03-01&bis=2026-03-31&betrag=NaN',
    "Parameter 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein.",
  ],
  [
    'von=2026-03-01&bis=2026-03-31&betrag=1.000,00',
    "Parameter 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein.",
  ],
  [
    'von=2026-03-01&bis=2026-03-31&betrag=1000000000000',
    "Parameter 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein.",
  ],
  [
    `${VALID}&toleranz=-1`,
    "Parameter 'toleranz' muss ein nicht negativer Betrag mit höchstens zwei Nachkommastellen sein.",
  ],
  [
    `${VALID}&toleranz=%2B1`,
    "Parameter 'toleranz' muss ein nicht negativer Betrag mit höchstens zwei Nachkommastellen sein.",
  ],
  [
    `${VALID}&toleranz=0.001`,
    "Parameter 'toleranz' muss ein nicht negativer Betrag mit höchstens zwei Nachkommastellen sein.",
  ],
  [`${VALID}&waehrung=EU`, "Parameter 'waehrung' muss ein dreistelliger Währungscode sein."],
  [`${VALID}&waehrung=EURO`, "Parameter 'waehrung' muss ein dreistelliger Währungscode sein."],
  [`${VALID}&waehrung=E1R`, "Parameter 'waehrung' muss ein dreistelliger Währungscode sein."],
  [`${VALID}&waehrung=%C3%84UR`, "Parameter 'waehrung' muss ein dreistelliger Währungscode sein."],
  [`${VALID}&limit=1001`, "Parameter 'limit' muss eine ganze Zahl zwischen 0 und 1000 sein."],
  [`${VALID}&limit=-1`, "Parameter 'limit' muss eine ganze Zahl zwischen 0 und 1000 sein."],
  [`${VALID}&limit=1.5`, "Parameter 'limit' muss eine ganze Zahl zwischen 0 und 1000 sein."],
  [`${VALID}&limit=1e2`, "Parameter 'limit' muss eine ganze Zahl zwischen 0 und 1000 sein."],
  [`${VALID}&limit=%2B5`, "Parameter 'limit' muss eine ganze Zahl zwischen 0 und 1000 sein."],
  [`${VALID}&limit=99999`, "Parameter 'limit' muss eine ganze Zahl zwischen 0 und 1000 sein."],
  [
    `von=2026-03-01&bis=2026-03-31&betrag=1&toleranz=x&waehrung=x&limit=x`,
    "Parameter 'toleranz' muss ein nicht negativer Betrag mit höchstens zwei Nachkommastellen sein.",
  ],
  [
    `von=2026-03-01&bis=2026-03-31&betrag=1&waehrung=x&limit=x`,
    "Parameter 'waehrung' muss ein dreistelliger Währungscode sein.",
  ],
  // 4. the range, last of all
  ['von=2026-04-01&bis=2026-03-31&betrag=1', "Der Zeitraum ist ungültig: 'von' liegt nach 'bis'."],
  [
    'von=2026-04-01&bis=2026-03-31&betrag=1&limit=x',
    "Parameter 'limit' muss eine ganze Zahl zwischen 0 und 1000 sein.",
  ],
];

test('each rule of docs/API.md gives its message, first failing rule first', () => {
  for (const [query, message] of MESSAGES) assert.equal(messageOf(query), message, query);
});

test('a message never echoes more than 40 characters of the input', () => {
  const result = messageOf(`${'a'.repeat(10_000)}=1`);
  assert.equal(result, `Unbekannter Parameter '${'a'.repeat(40)}'.`);
});

test('a query of 20,000 escapes is rejected without throwing', () => {
  assert.equal(messageOf('%'.repeat(20_000)), 'Die Anfrage enthält ungültig kodierte Zeichen.');
  assert.equal(messageOf(`${'%41'.repeat(20_000)}=1`), `Unbekannter Parameter '${'A'.repeat(40)}'.`);
});

test('parseAmount reads decimal text into exact integer cents', () => {
  const cases: Array<[string, number]> = [
    ['4.35', 435], // 4.35 * 100 === 434.99999999999994 in floating point
    ['-4.35', -435],
    ['+4.35', 435],
    ['-12.5', -1250],
    ['-12,50', -1250],
    ['7', 700],
    ['0.1', 10],
    ['0,01', 1],
    ['-0', 0],
    ['007', 700],
    ['1.10', 110],
    ['999999999999.99', 99_999_999_999_999],
    ['-999999999999.99', -99_999_999_999_999],
  ];
  for (const [text, cents] of cases) assert.equal(parseAmount(text), cents, text);
});

test('parseAmount never returns -0', () => {
  assert.ok(Object.is(parseAmount('-0.00'), 0));
});

test('parseAmount rejects everything but 1–12 digits with up to two decimals', () => {
  const rejected = [
    '',
    '-',
    '+',
    '.5',
    ',5',
    '5.',
    '5,',
    '1.234',
    '1e3',
    '1E3',
    ' 1',
    '1 ',
    '1 000',
    '1.000,00',
    '1,000.00',
    'NaN',
    'Infinity',
    '-Infinity',
    '0x10',
    '--1',
    '+-1',
    '1000000000000',
    '١٢',
    '１２',
    '12.5.1',
    '½',
  ];
  for (const text of rejected) assert.equal(parseAmount(text), undefined, JSON.stringify(text));
});

test('parseUnsignedAmount accepts no sign at all', () => {
  assert.equal(parseUnsignedAmount('0.10'), 10);
  assert.equal(parseUnsignedAmount('5'), 500);
  assert.equal(parseUnsignedAmount('-0.10'), undefined);
  assert.equal(parseUnsignedAmount('+0.10'), undefined);
});

// A tripwire for whoever adds a parameter: the tests of the contract name the places a
// reader finds (CONTRIBUTING.md, "Where to change what"), not these two, which would
// answer a wrong `anzahl` without a word.
test('the search parameters are the six the statements know: a new filter is also a term of applicationSql and keeps chooseCount from `everything`', () => {
  assert.deepEqual(
    [...PARAMETERS],
    ['von', 'bis', 'betrag', 'toleranz', 'waehrung', 'limit'],
    "a new filter: lib/search/sql.ts's `everything` count reads no FILTERS (it counts whole b-trees when a search spans every date and amount), so chooseCount must not choose it while the filter is given; and lib/search/application-search.ts's applicationSql has a WHERE of its own. Then update this list",
  );
});
