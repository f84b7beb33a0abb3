// The oracle of the hostile-input tests: docs/API.md's validation rules and processing
// steps written a second time, another way — its own decoder, BigInt cents, the search
// done in JavaScript over the rows — so that it shares no code, and no mistake, with lib/.

import type Database from 'better-sqlite3';

export type Outcome = { status: 400; fehler: string } | { status: 200; body: unknown };
export interface Row {
  id: number;
  date: string;
  cents: bigint;
  subject: string;
  category: string | null;
  method: string | null;
}

/** The query parameters, in the table's order (test/unit/contract.test.ts holds this to the code). */
export const NAMES = ['von', 'bis', 'betrag', 'toleranz', 'waehrung', 'limit'];
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Percent-decoding byte by byte; `null` for a malformed escape or bytes that are not UTF-8. */
function formDecode(text: string): string | null {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i] as string;
    if (char === '%') {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return null;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(char === '+' ? ' ' : char, 'utf8'));
    }
  }
  try {
    return strictUtf8.decode(Uint8Array.from(bytes));
  } catch {
    return null;
  }
}

function realDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function cents(text: string, signed: boolean): bigint | null {
  const match = (signed ? /^([+-]?)(\d{1,12})(?:[.,](\d{1,2}))?$/ : /^()(\d{1,12})(?:[.,](\d{1,2}))?$/).exec(text);
  if (!match) return null;
  const value = BigInt(match[2] as string) * 100n + BigInt((match[3] ?? '').padEnd(2, '0'));
  return match[1] === '-' ? -value : value;
}

export function expected(raw: string, rows: readonly Row[]): Outcome {
  const bad = (fehler: string): Outcome => ({ status: 400, fehler });
  const pieces = raw.split('&').filter((piece) => piece.length > 0);
  const pairs: Array<[string, string]> = [];
  for (const piece of pieces) {
    const [name, ...rest] = piece.split('=');
    const decodedName = formDecode(name as string);
    const decodedValue = formDecode(rest.join('='));
    if (decodedName === null || decodedValue === null) return bad('Die Anfrage enthält ungültig kodierte Zeichen.');
    pairs.push([decodedName, decodedValue]);
  }
  const given = new Map<string, string>();
  for (const [name, value] of pairs) {
    if (!NAMES.includes(name)) return bad(`Unbekannter Parameter '${[...name].slice(0, 40).join('')}'.`);
    if (given.has(name)) return bad(`Parameter '${name}' darf nur einmal angegeben werden.`);
    given.set(name, value);
  }
  const value = (name: string): string | undefined => (given.get(name) === '' ? undefined : given.get(name));
  for (const name of ['von', 'bis']) {
    if (value(name) === undefined) return bad(`Parameter '${name}' fehlt.`);
    if (!realDate(value(name) as string))
      return bad(`Parameter '${name}' muss ein gültiges Datum im Format JJJJ-MM-TT sein.`);
  }
  if (value('betrag') === undefined) return bad("Parameter 'betrag' fehlt.");
  const betrag = cents(value('betrag') as string, true);
  if (betrag === null) return bad("Parameter 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein.");
  const toleranz = value('toleranz') === undefined ? 0n : cents(value('toleranz') as string, false);
  if (toleranz === null)
    return bad("Parameter 'toleranz' muss ein nicht negativer Betrag mit höchstens zwei Nachkommastellen sein.");
  const waehrung = value('waehrung') ?? 'EUR';
  if (!/^[a-zA-Z]{3}$/.test(waehrung)) return bad("Parameter 'waehrung' muss ein dreistelliger Währungscode sein.");
  const limitText = value('limit') ?? '50';
  if (!/^\d+$/.test(limitText) || limitText.length > 4 || Number(limitText) > 1000) {
    return bad("Parameter 'limit' muss eine ganze Zahl zwischen 0 und 1000 sein.");
  }
  const [von, bis] = [value('von') as string, value('bis') as string];
  if (von > bis) return bad("Der Zeitraum ist ungültig: 'von' liegt nach 'bis'.");
  if (waehrung !== 'EUR') return { status: 200, body: { anzahl: 0, buchungen: [] } };

  const matches = rows
    .filter((row) => row.date >= von && row.date <= bis)
    .filter((row) => {
      const difference = -row.cents - betrag;
      return (difference < 0n ? -difference : difference) <= toleranz;
    })
    .sort((a, b) => (a.date === b.date ? b.id - a.id : a.date < b.date ? 1 : -1));
  const buchungen = matches.slice(0, Number(limitText)).map((row) => ({
    id: row.id,
    datum: row.date,
    betrag: Number(-row.cents) / 100,
    zweck: row.subject,
    ...(row.category === null ? {} : { kategorie: row.category }),
    ...(row.method === null ? {} : { konto: row.method }),
  }));
  return { status: 200, body: { anzahl: matches.length, buchungen } };
}

export function loadRows(db: Database.Database): Row[] {
  return db
    .prepare<
      [],
      { id: number; date: string; cents: number; subject: string; category: string | null; method: string | null }
    >(
      `SELECT e.id, e.date, e.amount_cents AS cents, e.subject, c.name AS category, p.name AS method FROM entries e
       LEFT JOIN categories c ON c.id = e.category_id LEFT JOIN payment_methods p ON p.id = e.payment_method_id`,
    )
    .all()
    .map((row) => ({ ...row, cents: BigInt(row.cents) }));
}
