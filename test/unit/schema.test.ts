// lib/schema.ts: what the catalog holds under a name, and which mappings read only tables
// of the file (the command runs their searches inline, the rest in its guard).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { findApplication } from '../../lib/apps/index.js';
import { ownSchema } from '../../lib/mapping.js';
import { catalogKind, findUnboundedObject } from '../../lib/schema.js';
import { fixtureSql } from '../support/helpers.js';

function ownBook(): Database.Database {
  const db = new Database(':memory:');
  db.exec(fixtureSql('schema.sql'));
  return db;
}

test('catalogKind tells a table (rowid or WITHOUT ROWID), a view and a virtual table apart by name, TEMP before main as a statement resolves it', () => {
  const db = ownBook();
  db.exec(`CREATE TABLE ohne (id INTEGER PRIMARY KEY, x) WITHOUT ROWID;
    CREATE VIEW kasse AS SELECT * FROM entries;
    CREATE VIRTUAL TABLE volltext USING fts5(subject);`);
  assert.equal(catalogKind(db, 'entries'), 'table');
  assert.equal(catalogKind(db, 'ENTRIES'), 'table');
  assert.equal(catalogKind(db, 'ohne'), 'table');
  assert.equal(catalogKind(db, 'kasse'), 'view');
  assert.equal(catalogKind(db, 'volltext'), 'virtual table');
  assert.equal(catalogKind(db, 'volltext_data'), 'table', "fts5's own tables are tables");
  assert.equal(catalogKind(db, 'fehlt'), undefined);
  db.exec('CREATE TEMP VIEW entries AS SELECT * FROM main.entries');
  assert.equal(catalogKind(db, 'entries'), 'view');
  assert.equal(catalogKind(db, 'main.entries'), 'table');
  assert.equal(catalogKind(db, 'temp.entries'), 'view');
  db.exec("ATTACH ':memory:' AS archiv; CREATE TABLE archiv.alt (id INTEGER PRIMARY KEY)");
  assert.equal(catalogKind(db, 'alt'), 'table');
});

test('findUnboundedObject: the own schema and an application over tables read only tables; a view, a virtual table or a generated column is named', () => {
  assert.equal(findUnboundedObject(ownBook()), undefined);
  const gnucash = new Database(':memory:');
  gnucash.exec(fixtureSql('gnucash.sql'));
  assert.equal(findUnboundedObject(gnucash, findApplication('gnucash')), undefined);

  const view = ownBook();
  view.exec('ALTER TABLE entries RENAME TO kasse; CREATE VIEW entries AS SELECT * FROM kasse');
  assert.equal(findUnboundedObject(view), "'entries' is a view");
  assert.equal(findUnboundedObject(view, ownSchema({ entries: 'kasse' })), undefined);

  const virtual = ownBook();
  virtual.exec('DROP TABLE categories; CREATE VIRTUAL TABLE categories USING fts5(id, name)');
  assert.equal(findUnboundedObject(virtual), "'categories' is a virtual table");

  const generated = ownBook();
  generated.exec(`CREATE TABLE kasse (id INTEGER PRIMARY KEY, tag TEXT, amount_cents INTEGER, subject TEXT,
    category_id INTEGER, payment_method_id INTEGER, date TEXT GENERATED ALWAYS AS (tag || '-01'))`);
  assert.equal(findUnboundedObject(generated, ownSchema({ entries: 'kasse' })), "'kasse' has generated columns");

  assert.equal(findUnboundedObject(ownBook(), ownSchema({ entries: 'fehlt' })), "'fehlt' is missing");
});
