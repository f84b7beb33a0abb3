// The books a service serves: each book's file followed over time (replaced, deleted,
// locked, a new schema), the in-memory demo book, and all the books of a configuration
// behind one handler. Runs in the serving process (the only process, or each worker).
//
// This file is the room's door: the other rooms import from it only.

export { type BookView, orNobody } from './books.js';
export { watchDatabase } from './database.js';
export { createDemoDatabase, createEmptyBook, type DemoDatabase } from './demo.js';
export { inMemoryDatabase } from './in-memory.js';
export { preflightDatabaseFile } from './preflight.js';
export { BOOK_CACHE_KIB, type BookService, serveBooks } from './serve-books.js';
export type { BuildHandler, DatabaseStatus } from './status.js';
export { type StaleLog, staleLogs } from './wal-files.js';
