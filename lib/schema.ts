// The schema the service reads (docs/API.md, Storage): three tables, or views with the same
// columns, under names the admin may choose; or a real application's tables (lib/mapping.ts).
// fixtures/schema.sql holds the own schema's DDL.

import type { Database } from 'better-sqlite3';
import { APPLICATIONS } from './apps/index.js';
import { type ApplicationMapping, type Mapping, ownSchema, quoteName, requiredTables, splitName } from './mapping.js';

export const REQUIRED_COLUMNS = {
  entries: ['id', 'date', 'amount_cents', 'subject', 'category_id', 'payment_method_id'],
  categories: ['id', 'name'],
  payment_methods: ['id', 'name'],
} as const satisfies Record<string, readonly string[]>;

/**
 * What the database lacks of the mapping's tables, one sentence per table: empty when it
 * fits. Tables and views both count.
 */
export function findSchemaProblems(db: Database, mapping: Mapping = ownSchema()): string[] {
  const columnsOf = db.prepare<[string, string | null], { name: string }>('SELECT name FROM pragma_table_info(?, ?)');
  const problems: string[] = [];
  for (const [table, required] of Object.entries(requiredTables(mapping))) {
    const { schema, table: bare } = splitName(table);
    const present = new Set(columnsOf.all(bare, schema).map((column) => column.name));
    if (present.size === 0) {
      problems.push(`table or view '${table}' is missing`);
      continue;
    }
    const missing = required.filter((column) => !present.has(column));
    if (missing.length > 0) {
      problems.push(
        `'${table}' is missing column${missing.length > 1 ? 's' : ''} ${missing.map((c) => `'${c}'`).join(', ')}`,
      );
    }
  }
  return problems;
}

/** The indexes the search needs (fixtures/schema.sql creates them; BENCHMARKS.md says why). */
export const RECOMMENDED_INDEXES = [
  {
    name: 'entries_amount_date',
    columns: ['amount_cents', 'date'],
    purpose: 'one amount, or a narrow band, in a window of dates',
  },
  {
    name: 'entries_date_id_amount',
    columns: ['date', 'id', 'amount_cents'],
    purpose: 'a wide band of amounts in a short window',
  },
] as const;

export interface IndexReport {
  name: string;
  columns: readonly string[];
  purpose: string;
  /** The name of an index of `entries` that starts with these columns, if there is one. */
  presentAs: string | undefined;
  createStatement: string;
}

/** For the own schema's entries table (`entries` unless renamed): which recommended index it has. Empty for a view. */
export function findRecommendedIndexes(db: Database, entries = 'entries'): IndexReport[] {
  const { schema, table } = splitName(entries);
  const indexes = db
    .prepare<[string, string | null], { name: string }>('SELECT name FROM pragma_index_list(?, ?)')
    .all(table, schema);
  const columnsOf = db.prepare<[string, string | null], { name: string | null }>(
    'SELECT name FROM pragma_index_info(?, ?) ORDER BY seqno',
  );
  const existing = indexes.map(({ name }) => ({
    name,
    columns: columnsOf.all(name, schema).map((column) => column.name),
  }));
  return RECOMMENDED_INDEXES.map(({ name, columns, purpose }) => ({
    name,
    columns,
    purpose,
    presentAs: existing.find((index) => columns.every((column, i) => index.columns[i] === column))?.name,
    createStatement: `CREATE INDEX ${name} ON ${entries === 'entries' ? 'entries' : quoteName(entries)} (${columns.join(', ')});`,
  }));
}

/** The application whose tables the file holds, if it holds one's (the first that fits). */
export function detectApplication(db: Database): ApplicationMapping | undefined {
  return APPLICATIONS.find((app) => findSchemaProblems(db, app).length === 0);
}

/**
 * Whose tables the file holds when it does not fit `asked`: another application's, or the
 * own schema's (under its usual names) when an application was asked for; `undefined` when
 * neither. For the hint that names the right `--app`.
 */
export function recogniseOther(db: Database, asked: Mapping): Mapping | undefined {
  const app = APPLICATIONS.find((other) => other.name !== asked.name && findSchemaProblems(db, other).length === 0);
  if (app !== undefined) return app;
  const own = ownSchema();
  return asked.kind === 'application' && findSchemaProblems(db, own).length === 0 ? own : undefined;
}

/**
 * The application whose tables the file holds, each of them, but not all their columns:
 * most likely a file of an older version of it, before a column the mapping reads was
 * added. `undefined` when there is none (or when one fits fully: detectApplication).
 */
export function recogniseOlder(db: Database): ApplicationMapping | undefined {
  return APPLICATIONS.find((app) => {
    const problems = findSchemaProblems(db, app);
    return problems.length > 0 && problems.every((problem) => !problem.startsWith('table or view '));
  });
}
