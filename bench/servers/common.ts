// What the peers share: the same contract as the service, written the straightforward way
// (one plain query, objects serialized by the framework). Only the framework differs.

import { createHash, timingSafeEqual } from 'node:crypto';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { parseSearchQuery } from '../../lib/query.js';

export const { values: args } = parseArgs({
  options: { db: { type: 'string' }, port: { type: 'string', default: '0' } },
});

export const USER = process.env['BOOKING_SEARCH_USER'] ?? 'bench';
export const PASSWORD = process.env['BOOKING_SEARCH_PASSWORD'] ?? 'bench';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();
const expectedUser = digest(USER);
const expectedPassword = digest(PASSWORD);

export function authenticated(header: string | undefined): boolean {
  const match = /^basic +(\S+)$/i.exec(header ?? '');
  if (!match) return false;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return false;
  const user = timingSafeEqual(digest(decoded.slice(0, colon)), expectedUser);
  const password = timingSafeEqual(digest(decoded.slice(colon + 1)), expectedPassword);
  return user && password;
}

export interface Answer {
  status: number;
  body: unknown;
}

export function createPlainSearch(file: string): (rawQuery: string) => Answer {
  const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 100 });
  const count = db
    .prepare<unknown[], number>(
      'SELECT count(*) FROM entries WHERE date BETWEEN ? AND ? AND amount_cents BETWEEN ? AND ?',
    )
    .pluck();
  const page = db.prepare<
    unknown[],
    {
      id: number;
      date: string;
      amount_cents: number;
      subject: string;
      category: string | null;
      payment_method: string | null;
    }
  >(
    `SELECT e.id, e.date, e.amount_cents, e.subject, c.name AS category, p.name AS payment_method FROM entries e
     LEFT JOIN categories c ON c.id = e.category_id LEFT JOIN payment_methods p ON p.id = e.payment_method_id
     WHERE e.date BETWEEN ? AND ? AND e.amount_cents BETWEEN ? AND ? ORDER BY e.date DESC, e.id DESC LIMIT ?`,
  );
  return (rawQuery) => {
    const parsed = parseSearchQuery(rawQuery);
    if (!parsed.ok) return { status: 400, body: { fehler: parsed.message } };
    const q = parsed.query;
    if (q.waehrung !== 'EUR') return { status: 200, body: { anzahl: 0, buchungen: [] } };
    const bounds = [q.von, q.bis, -q.betragCents - q.toleranzCents, -q.betragCents + q.toleranzCents];
    const anzahl = count.get(...bounds) ?? 0;
    const buchungen = page.all(...bounds, q.limit).map((row) => ({
      id: row.id,
      datum: row.date,
      betrag: -row.amount_cents / 100,
      zweck: row.subject,
      ...(row.category === null ? {} : { kategorie: row.category }),
      ...(row.payment_method === null ? {} : { konto: row.payment_method }),
    }));
    return { status: 200, body: { anzahl, buchungen } };
  };
}

export function announce(port: number): void {
  process.stdout.write(`listening on http://127.0.0.1:${port}/api/v1/\n`);
}
