// What the peers share: the same contract as the service, written the straightforward way
// (one plain query, objects serialized by the framework). Only the framework differs.

import { createHash, timingSafeEqual } from 'node:crypto';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { parseSearchQuery } from '../../lib/query.js';
import { type Bounds, PLAIN, toBounds } from '../../lib/search/index.js';

export const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    port: { type: 'string', default: '0' },
    // The ceiling only: a busy wait of this many µs per request (bench/ladder.ts).
    'busy-us': { type: 'string', default: '0' },
    // The ceiling only: its answers ended together at the end of a turn of the event loop.
    together: { type: 'boolean', default: false },
  },
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
  // The one plain query of the contract (lib/search/sql.ts's PLAIN), row objects as a
  // straightforward server reads them.
  const count = db.prepare<[Bounds], number>(PLAIN.count).pluck();
  const page = db.prepare<[Bounds & { limit: number }], unknown[]>(PLAIN.page).raw();
  return (rawQuery) => {
    const parsed = parseSearchQuery(rawQuery);
    if (!parsed.ok) return { status: 400, body: { fehler: parsed.message } };
    const q = parsed.query;
    if (q.waehrung !== 'EUR') return { status: 200, body: { anzahl: 0, buchungen: [] } };
    const bounds = toBounds(q);
    const anzahl = count.get(bounds) ?? 0;
    const buchungen = page.all({ ...bounds, limit: q.limit }).map((row) => {
      const [id, date, amountCents, subject, category, paymentMethod] = row as [
        number,
        string,
        number,
        string,
        string | null,
        string | null,
      ];
      return {
        id,
        datum: date,
        betrag: -amountCents / 100,
        zweck: subject,
        ...(category === null ? {} : { kategorie: category }),
        ...(paymentMethod === null ? {} : { konto: paymentMethod }),
      };
    });
    return { status: 200, body: { anzahl, buchungen } };
  };
}

export function announce(port: number): void {
  process.stdout.write(`listening on http://127.0.0.1:${port}/api/v1/\n`);
}
