// What a TypeScript user writes: it must type-check against the packed package.

import { createServer } from 'node:http';
import Database from 'better-sqlite3';
import {
  API_VERSION,
  answerClientError,
  answerConnect,
  answerExpectation,
  answerProtocolErrors,
  type BankLine,
  type Booking,
  type BookingSearchHandler,
  type Credentials,
  createHandler,
  createSharedParts,
  type HandlerOptions,
  mountHandlers,
  type ReconcileRequest,
  type ReconcileResult,
  type RequestHandler,
  type SearchResult,
  type SharedParts,
  type StatusResult,
} from 'booking-search-server';

const credentials: Credentials = { username: 'abgleich', password: 'geheim' };
const options: HandlerOptions = {
  basePath: '/kasse',
  serviceName: 'Kasse',
  onError: (error, req) => console.error(req.url, error),
  trustProxy: false,
  corsOrigins: ['https://buchhaltung.example'],
  // A name from the environment may be unset: undefined is the default, as for every option.
  tables: { entries: process.env.ENTRIES_TABLE },
};
const db = new Database(':memory:');
const handler: RequestHandler = createHandler(db, credentials, options);
// The published types take a better-sqlite3 Database, not the command's own search.
const search = { answer: () => undefined, queue: () => undefined, waitingFrom: () => 0, waitingFor: () => 0 };
// @ts-expect-error
createHandler(search, credentials);
answerProtocolErrors(createServer((req, res) => handler(req, res, () => res.end())))
  .listen(0)
  .close();
createServer()
  .on('clientError', answerClientError)
  .on('checkExpectation', answerExpectation)
  .on('connect', answerConnect);
createServer((req, res) => handler(req, res, () => res.end()));
// Several clients, hashed secrets (booking-search-server hash-password), and a reload.
const clients: Credentials[] = [
  credentials,
  {
    username: 'pruefer',
    passwordHash: '$scrypt$ln=17,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g',
  },
];
const reloadable: BookingSearchHandler = createHandler(db, clients);
reloadable.updateCredentials({ username: 'pruefer', passwordHash: clients[1]?.passwordHash ?? '' });

// Several books, one login throttle for them and their fallback.
const shared: SharedParts = createSharedParts({ maxAuthFailures: 5 });
mountHandlers(
  [
    {
      basePath: '/mueller',
      handler: createHandler(db, clients, { basePath: '/mueller', serviceName: 'Mueller' }, shared),
    },
  ],
  createHandler(db, clients, { basePath: '/mueller', serviceName: 'Kanzlei' }, shared),
);

const version: '1.0' extends typeof API_VERSION ? string : never = API_VERSION;
const booking: Booking = { id: 1, datum: '2026-03-14', betrag: -12.5, zweck: 'Porto' };
const result: SearchResult = { anzahl: 1, buchungen: [booking] };
const status: StatusResult = { name: 'Kasse', version };
// A reconciliation: amounts as strings, the answer's lines by the request's.
const line: BankLine = { ref: 'K-17', datum: '2026-03-14', betrag: '-12.50', teile: 2, vorzeichen: 'beide' };
const statement: ReconcileRequest = { zeilen: [line], ausser: [4711] };
const reconciled: ReconcileResult = {
  zeilen: [{ ref: 'K-17', buchungen: [booking], kandidaten: 1, eindeutig: true, alternativen: [] }],
};
console.log(result, status, statement, reconciled);
