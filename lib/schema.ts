// The schema the service reads (docs/applications.md, The own schema): three tables, or views with the same
// columns, under names the admin may choose; or a real application's tables (lib/mapping.ts).
// fixtures/schema.sql holds the own schema's DDL.

import type { Database } from 'better-sqlite3';
import { APPLICATIONS } from './apps/index.js';
import { type ApplicationMapping, type Mapping, ownSchema, quoteName, requiredTables, splitName } from './mapping.js';

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

/** What the catalog holds under a name: a table (a b-tree of its own in the file), a view or a virtual table. */
export type CatalogKind = 'table' | 'view' | 'virtual table';

/**
 * What `name` is (`schema.table` or a bare name, which a statement resolves in TEMP first,
 * then main, then the attached databases), found by its name in each schema's catalog:
 * rows of `sqlite_schema`, read without preparing any object. A table has a root page of
 * its own (rowid or WITHOUT ROWID); a view and a virtual table have none. `undefined`:
 * nothing of that name. Not `pragma_table_list`: it prepares every view of the file to
 * count its columns, each time, and a file of 20,000 views took 14 s per look.
 */
export function catalogKind(db: Database, name: string): CatalogKind | undefined {
  const { schema, table } = splitName(name);
  const schemas =
    schema !== null
      ? [schema]
      : [
          'temp',
          'main',
          ...db
            .prepare<[], string>("SELECT name FROM pragma_database_list WHERE name NOT IN ('main', 'temp')")
            .pluck()
            .all(),
        ];
  for (const where of schemas) {
    const found = db
      .prepare<[string], { type: string; rootpage: number | null }>(
        `SELECT type, rootpage FROM ${quoteName(where)}.sqlite_schema WHERE name = ? COLLATE NOCASE AND type IN ('table', 'view')`,
      )
      .get(table);
    if (found === undefined) continue;
    if (found.type === 'view') return 'view';
    return (found.rootpage ?? 0) > 0 ? 'table' : 'virtual table';
  }
  return undefined;
}

/**
 * The first object `mapping` reads that is not a table of the file without generated
 * columns, said as a phrase (`'entries' is a view`), or `undefined` when it reads only such
 * tables. Over those, the search's statements are the service's own and read b-trees of
 * the file: their work is bounded by what the file holds. A view runs whatever SQL the
 * file holds (a recursive one that never ends), a virtual table its module's code, and a
 * generated column its expression for every row read.
 */
export function findUnboundedObject(db: Database, mapping: Mapping = ownSchema()): string | undefined {
  const generated = db.prepare<[string, string | null], number>(
    'SELECT count(*) FROM pragma_table_xinfo(?, ?) WHERE hidden IN (2, 3)',
  );
  for (const name of Object.keys(requiredTables(mapping))) {
    const kind = catalogKind(db, name);
    if (kind !== 'table') return `'${name}' is ${kind === undefined ? 'missing' : `a ${kind}`}`;
    const { schema, table } = splitName(name);
    if ((generated.pluck().get(table, schema) ?? 0) > 0) return `'${name}' has generated columns`;
  }
  return undefined;
}

/** The indexes the search needs (fixtures/schema.sql creates them; docs/design/README.md, "How the service chooses", says why). */
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
