// Whether a file's booking texts are text: SQLite hands over what the file holds, whatever
// a column says, and a blob has no one text (its bytes need not be UTF-8), so a search that
// finds one answers 500 (lib/search-endpoint.ts). `check` and the start look at the sample.

import type { Database } from 'better-sqlite3';
import { type Mapping, quoteName } from '../mapping.js';

/**
 * The first booking of the first `size` whose zweck, category or account name is a blob,
 * said naming it (`named`) and naming no value (`unnamed`); `undefined` when there is none.
 */
export function blobText(db: Database, mapping: Mapping, size: number): { named: string; unnamed: string } | undefined {
  const sample =
    mapping.kind === 'own'
      ? `SELECT e.id, e.subject, c.name AS category, p.name AS payment_method
         FROM (SELECT id, subject, category_id, payment_method_id FROM ${quoteName(mapping.tables.entries)} LIMIT +:size) AS e
         LEFT JOIN ${quoteName(mapping.tables.categories)} AS c ON c.id = e.category_id
         LEFT JOIN ${quoteName(mapping.tables.paymentMethods)} AS p ON p.id = e.payment_method_id`
      : `SELECT id, subject, category, payment_method FROM (${mapping.allBookings}) LIMIT +:size`;
  const found = db
    .prepare<[Record<string, unknown>], [id: unknown, field: string]>(
      `SELECT id, CASE 'blob' WHEN typeof(subject) THEN 'zweck' WHEN typeof(category) THEN 'kategorie' ELSE 'konto' END
       FROM (${sample}) WHERE 'blob' IN (typeof(subject), typeof(category), typeof(payment_method)) LIMIT 1`,
    )
    .raw()
    .get({ low: -(2 ** 53), high: 2 ** 53, size });
  if (found === undefined) return undefined;
  const [id, field] = found;
  const rest =
    ', not text: a search that finds it would answer 500; store it as TEXT (CAST(x AS TEXT) reads its bytes as UTF-8).';
  return {
    named: `booking ${JSON.stringify(id)}'s ${field} is a blob${rest}`,
    unnamed: `a booking's ${field} is a blob${rest}`,
  };
}
