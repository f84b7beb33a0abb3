// A realistic cash book for the benchmarks: ten years of bookings, amounts skewed like
// real cash (many small, few large, frequent typical prices), about 10% income, some
// NULL categories and payment methods. The same arguments always give the same file.
// The default, 20,000 bookings in ten years (five or six a day), is the cash book of a
// small business; 1,000,000 is the stress file. `--analyze` leaves the file as an
// application that runs `ANALYZE` or `PRAGMA optimize` does: with sqlite_stat1 and
// sqlite_stat4 (better-sqlite3's SQLite is built with SQLITE_ENABLE_STAT4).
//
//   npm run bench:data -- [--rows 20000] [--analyze] [--out bench/data/bookings-20000.sqlite] [--end 2026-10-31]

import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { mulberry32 } from '../bin/books/demo.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    analyze: { type: 'boolean', default: false },
    out: { type: 'string' },
    end: { type: 'string', default: '2026-10-31' },
    years: { type: 'string', default: '10' },
  },
});
const rows = Number(values.rows);
const out = values.out ?? `bench/data/bookings-${rows}${values.analyze ? '-analyzed' : ''}.sqlite`;
const endMs = Date.parse(`${values.end}T00:00:00Z`);
const days = Math.round(Number(values.years) * 365.25);
if (!Number.isSafeInteger(rows) || rows < 1 || Number.isNaN(endMs)) {
  throw new Error('usage: generate.ts --rows N [--out FILE] [--end YYYY-MM-DD] [--years N]');
}

const CATEGORIES = [
  'Porto',
  'Bürobedarf',
  'Bewirtung',
  'Reisekosten',
  'Reinigung',
  'Getränke',
  'Werkzeug',
  'Fachliteratur',
  'Geschenke',
  'Kfz-Kosten',
  'Spenden',
  'Sonstiges',
];
const PAYMENT_METHODS = ['Barkasse', 'Handkasse Lager', 'Portokasse', 'Kasse Filiale Köln'];
const SUBJECTS = [
  'Briefmarken für Mahnungen',
  'Kaffee und Gebäck',
  'Parkgebühr Innenstadt',
  'Straßenbahn-Tageskarte',
  'Druckerpapier A4',
  'Kugelschreiber und Textmarker',
  'Mineralwasser für das Büro',
  'Reinigungsmittel',
  'Taxi zum Bahnhof',
  'Blumen für Jubiläum',
  'Fachzeitschrift März',
  'Schrauben und Dübel',
  'Tanken Lieferwagen',
  'Trinkgeld Paketbote',
  'Kopien im Copyshop',
  'Mittagessen mit Lieferant',
  'Glühbirnen Lager',
  'Spende Sportverein',
];
const INCOME_SUBJECTS = [
  'Bareinzahlung aus der Tageskasse',
  'Rückerstattung Pfand',
  'Verkauf Altpapier',
  'Barverkauf an Laufkunden',
];
// Typical prices, in cents, that recur again and again in a cash book.
const TYPICAL = [435, 1250, 95, 180, 250, 300, 500, 990, 1999, 2495, 4990, 85, 160, 370, 860, 120];

const random = mulberry32(42);
const gaussian = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

function amountCents(): number {
  const roll = random();
  if (roll < 0.1) {
    // Income: stored negative, mostly round sums.
    return -(random() < 0.6 ? 1000 * (1 + Math.floor(random() * 50)) : Math.round(Math.exp(7 + 1.2 * gaussian())));
  }
  // A third are typical prices, the first of the list more often than the last.
  if (roll < 0.45) return TYPICAL[Math.floor(random() ** 1.5 * TYPICAL.length)] as number;
  // Log-normal around 15 €: many small amounts, a long tail of large ones.
  return Math.max(1, Math.min(99_999_999, Math.round(Math.exp(Math.log(1500) + 1.1 * gaussian()))));
}

if (existsSync(out)) rmSync(out);
mkdirSync(dirname(out), { recursive: true });
const db = new Database(out);
db.pragma('journal_mode = OFF');
db.pragma('synchronous = OFF');
db.exec(readFileSync(new URL('../fixtures/schema.sql', import.meta.url), 'utf8'));

const insertEntry = db.prepare(
  'INSERT INTO entries (date, amount_cents, subject, category_id, payment_method_id) VALUES (?, ?, ?, ?, ?)',
);
const started = Date.now();
db.transaction(() => {
  for (const [i, name] of CATEGORIES.entries()) {
    db.prepare('INSERT INTO categories (id, name) VALUES (?, ?)').run(i + 1, name);
  }
  for (const [i, name] of PAYMENT_METHODS.entries()) {
    db.prepare('INSERT INTO payment_methods (id, name) VALUES (?, ?)').run(i + 1, name);
  }
  for (let i = 0; i < rows; i += 1) {
    // Bookings are entered in date order, as a cash book is kept.
    const date = new Date(endMs - (days - 1 - Math.floor((i * days) / rows)) * 86_400_000).toISOString().slice(0, 10);
    const cents = amountCents();
    const subjects = cents < 0 ? INCOME_SUBJECTS : SUBJECTS;
    const category = random() < 0.15 ? null : 1 + Math.floor(random() * CATEGORIES.length);
    const paymentMethod = random() < 0.1 ? null : 1 + Math.floor(random() * PAYMENT_METHODS.length);
    insertEntry.run(date, cents, subjects[Math.floor(random() * subjects.length)], category, paymentMethod);
    if ((i + 1) % 100_000 === 0 || i + 1 === rows) {
      process.stderr.write(`\rgenerating ${out}: ${i + 1} of ${rows} bookings`);
    }
  }
})();
if (values.analyze) db.exec('ANALYZE');
db.pragma('journal_mode = DELETE');
db.close();
process.stderr.write(` in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
