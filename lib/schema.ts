// The schema the service reads (SPEC.md, Storage): three tables, or views with the same
// columns. fixtures/schema.sql holds the DDL.

import type { Database } from 'better-sqlite3';

export const REQUIRED_COLUMNS = {
  entries: ['id', 'date', 'amount_cents', 'subject', 'category_id', 'payment_method_id'],
  categories: ['id', 'name'],
  payment_methods: ['id', 'name'],
} as const satisfies Record<string, readonly string[]>;

/**
 * What the database lacks of the schema, one sentence per table: empty when it fits.
 * Tables and views both count.
 */
export function findSchemaProblems(db: Database): string[] {
  const columnsOf = db.prepare<[string], { name: string }>('SELECT name FROM pragma_table_info(?)');
  const problems: string[] = [];
  for (const [table, required] of Object.entries(REQUIRED_COLUMNS)) {
    const present = new Set(columnsOf.all(table).map((column) => column.name));
    if (present.size === 0) {
      problems.push(`table or view '${table}' is missing`);
      continue;
    }
    const missing = required.filter((column) => !present.has(column));
    if (missing.length > 0) {
      problems.push(`'${table}' is missing column${missing.length > 1 ? 's' : ''} ${missing.map((c) => `'${c}'`).join(', ')}`);
    }
  }
  return problems;
}
