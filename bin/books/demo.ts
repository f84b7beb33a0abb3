// --demo: an in-memory cash book of the last twelve months, the same every run of a day,
// so that a newcomer sees the service find real bookings without a file of their own.

import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';

export interface DemoDatabase {
  db: Database.Database;
  count: number;
  from: string;
  to: string;
  /** A search that finds bookings: a month and an amount that occurs in it, as the client writes it. */
  example: { von: string; bis: string; betrag: string };
}

const CATEGORIES = ['Porto', 'Bürobedarf', 'Bewirtung', 'Reisekosten', 'Reinigung', 'Getränke'];
const PAYMENT_METHODS = ['Barkasse', 'Handkasse Lager', 'Portokasse'];

// The greeting's example: postage stamps for 12.50 €, an amount among the bookings every run
// (the amounts are drawn from the seed alone, only their dates move with the day), written as
// the client speaks of an expense, a negative amount.
const EXAMPLE = { cents: 1250, betrag: '-12.50' };

interface Template {
  subject: string;
  /** 1-based index into CATEGORIES, or null. */
  category: number | null;
  /** Stored cents: expenses positive, income negative. */
  amounts: number[];
  weight: number;
}

const TEMPLATES: Template[] = [
  { subject: 'Briefmarken für Mahnungen', category: 1, amounts: [EXAMPLE.cents, 950, 1900], weight: 8 },
  { subject: 'Einschreiben mit Rückschein', category: 1, amounts: [435, 520], weight: 4 },
  { subject: 'Päckchen an Kunden', category: 1, amounts: [549, 699], weight: 3 },
  { subject: 'Druckerpapier A4, 5 Pakete', category: 2, amounts: [2495, 2299], weight: 3 },
  { subject: 'Kugelschreiber und Textmarker', category: 2, amounts: [789, 1245, 399], weight: 3 },
  { subject: 'Ordner für die Buchhaltung', category: 2, amounts: [1198, 599], weight: 2 },
  { subject: 'Kaffee und Gebäck für Kundengespräch', category: 3, amounts: [435, 870, 1260], weight: 6 },
  { subject: 'Mittagessen mit Lieferant', category: 3, amounts: [4380, 6250, 3790], weight: 2 },
  { subject: 'Straßenbahn-Tageskarte', category: 4, amounts: [860, 930], weight: 5 },
  { subject: 'Parkgebühr Innenstadt', category: 4, amounts: [300, 450, 600], weight: 5 },
  { subject: 'Taxi zum Bahnhof', category: 4, amounts: [1850, 2240], weight: 2 },
  { subject: 'Reinigungsmittel für die Küche', category: 5, amounts: [1387, 956], weight: 2 },
  { subject: 'Mineralwasser für das Büro', category: 6, amounts: [599, 1198], weight: 3 },
  { subject: 'Trinkgeld Paketbote', category: null, amounts: [200, 500], weight: 2 },
  { subject: 'Schlüsseldienst – Nachschlüssel', category: null, amounts: [2450], weight: 1 },
  { subject: 'Bareinzahlung aus der Tageskasse', category: null, amounts: [-20000, -15000, -5000], weight: 2 },
  { subject: 'Rückerstattung Pfand', category: 6, amounts: [-300, -450], weight: 2 },
  { subject: 'Verkauf Altpapier', category: null, amounts: [-1280], weight: 1 },
];

const BOOKINGS = 400;
const DAY_MS = 86_400_000;

/** An in-memory database with the schema and no booking (the answer for a path that names no book). */
export function createEmptyBook(): Database.Database {
  const db = new Database(':memory:');
  db.exec(readFileSync(new URL(import.meta.resolve('booking-search-server/schema.sql')), 'utf8'));
  return db;
}

export function createDemoDatabase(today: Date = new Date()): DemoDatabase {
  const db = createEmptyBook();

  const random = mulberry32(20_260_314);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const weighted = TEMPLATES.flatMap((template) => Array<Template>(template.weight).fill(template));
  const end = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

  const insertNamed = (table: string, names: readonly string[]): void => {
    const insert = db.prepare(`INSERT INTO ${table} (id, name) VALUES (?, ?)`);
    for (const [index, name] of names.entries()) insert.run(index + 1, name);
  };
  const insertEntry = db.prepare(
    'INSERT INTO entries (date, amount_cents, subject, category_id, payment_method_id) VALUES (?, ?, ?, ?, ?)',
  );

  db.transaction(() => {
    insertNamed('categories', CATEGORIES);
    insertNamed('payment_methods', PAYMENT_METHODS);
    for (let i = 0; i < BOOKINGS; i += 1) {
      const template = pick(weighted);
      const date = isoDate(end - Math.floor(random() * 365) * DAY_MS);
      // About one in ten bookings has no payment method: the application allows that.
      const paymentMethod = random() < 0.1 ? null : 1 + Math.floor(random() * PAYMENT_METHODS.length);
      insertEntry.run(date, pick(template.amounts), template.subject, template.category, paymentMethod);
    }
  })();
  const [from, to] = db.prepare<[], [string, string]>('SELECT min(date), max(date) FROM entries').raw().get() ?? [
    '',
    '',
  ];

  // The example: the latest month that holds the example's amount (an aggregate answers one row).
  const { von, bis } = db
    .prepare<[number], { von: string; bis: string }>(
      `SELECT date(max(date), 'start of month') AS von, date(max(date), 'start of month', '+1 month', '-1 day') AS bis
       FROM entries WHERE amount_cents = ?`,
    )
    .get(EXAMPLE.cents) as { von: string; bis: string };

  return { db, count: BOOKINGS, from, to, example: { von, bis, betrag: EXAMPLE.betrag } };
}

/** A small seeded generator (mulberry32), so the demo is the same on every machine. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
