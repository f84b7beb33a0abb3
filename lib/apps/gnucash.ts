// GnuCash (gnucash.org): a book saved in SQLite (File › Save As, Data Format "sqlite3"),
// as GnuCash's SQL backend writes it (libgnucash/backend/sql/). docs/applications.md,
// "GnuCash", says what is served.
//
// GnuCash's rules, read from its source (gnc-datetime.cpp, Split.c, the SQL backend) and
// from books its Python bindings wrote and read:
// - double entry: a transaction (`transactions`) has two or more splits (`splits`), one
//   per account it touches; ids are 32-digit hex guids;
// - `post_date` is text, a time in UTC: 'YYYY-MM-DD hh:mm:ss' since GnuCash 2.6.20,
//   'YYYYMMDDhhmmss' before, and GnuCash 4.x reads both (GncDateTime), rewriting a row only
//   when its transaction is edited, so a book kept for years holds both forms. GnuCash
//   writes an entered date at 10:59 UTC ("neutral time", moved in the outermost zones),
//   versions before it the local midnight, scripts and importers through its API any time
//   of day. GnuCash shows the day that time falls on in the local time zone of the
//   computer it runs on (TZ, else /etc/localtime; its register formats the time with
//   gnc_localtime);
// - a split's amount is a fraction: `value_num/value_denom` in the transaction's currency,
//   `quantity_num/quantity_denom` in the account's commodity; money leaving an asset
//   account is negative;
// - a void transaction keeps its splits with value and quantity 0 and reconcile_state 'v';
//   a deleted one is gone;
// - a transaction without a counter-account gets a split in a top-level account
//   'Imbalance-EUR' (its name translated), of type BANK;
// - with "Use Trading Accounts", a transaction between currencies also has a split in a
//   TRADING account per currency ("Trading:CURRENCY:EUR");
// - the other account the register names is that of the one other split, not counting
//   splits in TRADING accounts and splits cut up between lots (a 'lot-split' slot); with
//   two or more, the transaction is a split transaction (xaccSplitGetOtherSplit), also
//   when they are in the same account;
// - each account has its commodity (`commodities`, a currency has namespace 'CURRENCY').
//
// Served: one booking per split in a money account (type CASH, BANK, CREDIT, ASSET or
// LIABILITY) whose commodity is EUR and that is not top-level (GnuCash puts its own
// Imbalance and Orphan accounts, and the templates of scheduled transactions, at the top
// of a tree; the accounts a user keeps money in sit below "Assets" or "Liabilities"), void
// splits left out, on the day its post_date falls on in the service's own local time zone
// (TZ, else the system's zone, as GnuCash's), by Node.js' time zone data on every platform
// (lib/apps/local-time.ts; SQLite's 'localtime' ignores TZ on Windows). The
// amount is the split's quantity, in the account's EUR. With one other split: a money
// account makes it a transfer (subject 'Other account: description', no category), any
// other account is its category (Imbalance-EUR too, as GnuCash's register shows it); a
// split transaction has no category. The subject is otherwise the transaction's
// description (GnuCash's payee field); either is followed by the transaction's Notes,
// ': ' between. The id is the split guid's hex digits, 13 of them (lib/apps/ids.ts). The
// window is read by GnuCash's own index on transactions(post_date), in both forms, then
// each transaction's splits by splits(tx_guid).

import { dayNumber, isoDate } from '../days.js';
import type { ApplicationMapping } from '../mapping.js';
import { fractionCents, fractionHeld } from './fraction.js';
import { hexPrefixId } from './ids.js';
import { LOCAL_TIME_FUNCTIONS } from './local-time.js';
import { sharedAccountNames } from './names.js';

/** GnuCash's account types that hold money (gnc-account-sql.cpp stores the type as text). */
export const GNUCASH_MONEY_ACCOUNT_TYPES = ['CASH', 'BANK', 'CREDIT', 'ASSET', 'LIABILITY'] as const;

// Accounts that hold money, below a top-level account; `eur`: only those in EUR (served).
const moneyAccounts = (eur: boolean): string => `
  SELECT a.guid FROM accounts AS a
  JOIN accounts AS parent ON parent.guid = a.parent_guid AND parent.account_type <> 'ROOT'
  ${eur ? "JOIN commodities AS c ON c.guid = a.commodity_guid AND c.namespace = 'CURRENCY' AND c.mnemonic = 'EUR'" : ''}
  WHERE a.account_type IN (${GNUCASH_MONEY_ACCOUNT_TYPES.map((type) => `'${type}'`).join(', ')})`;

// `a: b`, or whichever of the two is not empty.
const joined = (a: string, b: string): string =>
  `coalesce(${a}, '') || CASE WHEN coalesce(${a}, '') <> '' AND coalesce(${b}, '') <> '' THEN ': ' ELSE '' END || coalesce(${b}, '')`;

// The bookings of the window, read one of two ways, chosen by the window's length before
// any row is read (`when` is a constant condition): up to three years by GnuCash's
// tx_post_date_index, transaction by transaction, then each one's splits; a longer window
// by splits_account_guid_index, every split of the money accounts, whose amount is
// compared before its transaction is read (a ten-year search for one amount on 20,000
// bookings: 17 ms instead of 51). `+` on account_guid keeps the first way off that index.
const LONG_WINDOW_DAYS = 3 * 366;
// A bound julianday() cannot read (check's whole range starts before the year 0) is long.
const WINDOW_DAYS = 'coalesce(julianday(+:to) - julianday(+:from), 1e9)';
// post_date as 'YYYY-MM-DD hh:mm:ss' UTC, whichever of GnuCash's two forms it is in.
const POSTED = `CASE WHEN substr(t.post_date, 5, 1) = '-' THEN t.post_date
  ELSE substr(t.post_date, 1, 4) || '-' || substr(t.post_date, 5, 2) || '-' || substr(t.post_date, 7, 2) || ' '
    || substr(t.post_date, 9, 2) || ':' || substr(t.post_date, 11, 2) || ':' || substr(t.post_date, 13, 2) END`;
// A window bound 'YYYY-MM-DD hh:mm:ss' in the form of books before 2.6.20, 'YYYYMMDDhhmmss'.
const oldForm = (bound: string): string => `replace(replace(replace(${bound}, '-', ''), ' ', ''), ':', '')`;
// post_date in the window, in either form.
const WINDOW = `(t.post_date BETWEEN +:from AND +:to OR t.post_date BETWEEN ${oldForm('+:from')} AND ${oldForm('+:to')}) AND`;
const SPLITS_FIRST = 'splits AS s CROSS JOIN transactions AS t ON t.guid = s.tx_guid';
// The transaction's Notes (GnuCash keeps them as a slot of the transaction), read by
// GnuCash's slots_guid_index only for a booking the search returns.
const NOTES = "(SELECT string_val FROM slots WHERE slots.obj_guid = t.guid AND slots.name = 'notes')";
// `window`: which way (a constant condition) and the window on post_date, followed by AND; or none.
const select = (from: string, account: string, window: string): string => `
    SELECT ${hexPrefixId('s.guid')} AS id,
           local_date(${POSTED}) AS date,
           -(${fractionCents('s.quantity_num', 's.quantity_denom')}) AS amount_cents,
           ${fractionHeld('s.quantity_num', 's.quantity_denom')} AS amount_held,
           ${joined(`CASE WHEN other.guid IN (${moneyAccounts(false)}) THEN ${joined('other.name', 't.description')} ELSE t.description END`, NOTES)} AS subject,
           CASE WHEN other.guid IN (${moneyAccounts(false)}) THEN NULL ELSE other.name END AS category,
           (SELECT name FROM accounts WHERE guid = s.account_guid) AS payment_method
    FROM ${from}
    LEFT JOIN accounts AS other ON other.guid = (
      SELECT CASE WHEN count(*) = 1 THEN min(x.account_guid) END
      FROM splits AS x
      WHERE x.tx_guid = s.tx_guid AND x.guid <> s.guid
        AND x.account_guid NOT IN (SELECT guid FROM accounts WHERE account_type = 'TRADING')
        AND NOT EXISTS (SELECT 1 FROM slots WHERE slots.obj_guid = x.guid AND slots.name = 'lot-split'))
    WHERE ${window} s.reconcile_state <> 'v'
      AND ${account} IN (${moneyAccounts(true)})`;

// The served accounts by their own name and by their full name, as GnuCash shows it
// (Assets:Filiale Nord:Kasse), up to 100 levels (a cycle would never end).
const SERVED_ACCOUNTS = `
  WITH RECURSIVE up(guid, name, shown, parent, depth) AS (
    SELECT a.guid, a.name, a.name, a.parent_guid, 0 FROM accounts AS a WHERE a.guid IN (${moneyAccounts(true)})
    UNION ALL
    SELECT up.guid, up.name, p.name || ':' || up.shown, p.parent_guid, up.depth + 1
    FROM up JOIN accounts AS p ON p.guid = up.parent AND p.account_type <> 'ROOT'
    WHERE up.depth < 100)
  SELECT name, shown FROM up WHERE depth = (SELECT max(depth) FROM up AS longest WHERE longest.guid = up.guid)`;

export const gnucash: ApplicationMapping = {
  kind: 'application',
  name: 'gnucash',
  title: 'GnuCash',
  requires: {
    transactions: ['guid', 'post_date', 'description'],
    splits: ['guid', 'tx_guid', 'account_guid', 'reconcile_state', 'quantity_num', 'quantity_denom'],
    accounts: ['guid', 'name', 'account_type', 'commodity_guid', 'parent_guid'],
    commodities: ['guid', 'namespace', 'mnemonic'],
    slots: ['obj_guid', 'name', 'string_val'],
    // A row (host, pid) while a GnuCash session has the book open, deleted as it closes it.
    gnclock: [],
  },
  // CROSS JOIN fixes each way's order. The money accounts are found once per search (a
  // dozen rows), not looked up per split. `other` is the account of the transaction's one
  // other split, as GnuCash's register names it (a split transaction has several); it is
  // joined last, for the rows that match.
  bookings: `
    ${select('transactions AS t CROSS JOIN splits AS s ON s.tx_guid = t.guid', '+s.account_guid', `${WINDOW_DAYS} <= ${LONG_WINDOW_DAYS} AND ${WINDOW}`)}
    UNION ALL
    ${select(SPLITS_FIRST, 's.account_guid', `${WINDOW_DAYS} > ${LONG_WINDOW_DAYS} AND ${WINDOW}`)}`,
  // Every split, also one whose post_date no window admits (NULL, or text that is no time).
  allBookings: select(SPLITS_FIRST, 's.account_guid', ''),
  // The day a post_date falls on in the local zone is at most a day away from its UTC day
  // (offsets lie within ±14 hours), so the window is widened by a day on each side, read in
  // both forms of post_date, and the converted dates are compared again (not exactWindow):
  // no date arithmetic here has to agree with local_date's.
  window: (von, bis) => ({ from: `${dayBefore(von)} 00:00:00`, to: `${dayAfter(bis)} 23:59:59` }),
  windowIndex: { name: 'tx_post_date_index' },
  functions: LOCAL_TIME_FUNCTIONS,
  // GnuCash's SQL backend sets no busy timeout: in rollback-journal mode a reader's SHARED
  // lock at its COMMIT fails the save at once (SQLITE_BUSY), and its session then fails the
  // saves after it, a transaction left without its splits. So a book in that mode is not
  // searched while a session has it open (its lock row is read, first and for a moment:
  // lib/database-handle.ts, refusedFirst); in WAL mode readers never block a writer. An
  // in-memory database ('memory') has no application to harm.
  refusals: `
    SELECT 'GnuCash has the book open (its lock: ' || coalesce(Hostname, '?') || ', process ' || coalesce(PID, '?')
           || ') in SQLite''s rollback-journal mode, in which a GnuCash save that meets a search'
           || ' fails at once ("database is locked") and GnuCash''s session then fails its later saves too: it is not'
           || ' searched while GnuCash has it open. Close GnuCash and switch the book to WAL once'
           || ' (PRAGMA journal_mode=WAL in sqlite3; docs/applications.md, GnuCash). A lock left by a GnuCash that'
           || ' did not close the book (a crash) goes once GnuCash opens it ("Open Anyway") and closes it.'
    FROM pragma_journal_mode, (SELECT Hostname, PID FROM gnclock LIMIT 1)
    WHERE journal_mode NOT IN ('wal', 'memory')`,
  harms: `
    SELECT 'the book is in SQLite''s rollback-journal mode: it is not searched while GnuCash has it open, for a GnuCash'
           || ' save that meets a search fails at once ("database is locked") and GnuCash''s session then fails its'
           || ' later saves too: run check and the service with GnuCash closed, and switch the book to WAL once'
           || coalesce(': sqlite3 ' || :book || ' "PRAGMA journal_mode=WAL"', ' (PRAGMA journal_mode=WAL in sqlite3)')
           || ' (docs/applications.md, GnuCash)'
    FROM pragma_journal_mode WHERE journal_mode NOT IN ('wal', 'memory') AND NOT EXISTS (SELECT 1 FROM gnclock)`,
  // A money account at the top level, or one in another currency, holds bookings that are
  // not served. GnuCash's own Imbalance-EUR and Orphan-EUR (their names translated) end in
  // '-' and the currency.
  notes: `
    SELECT 'accounts at the top level are not served (GnuCash keeps its own Imbalance and Orphan accounts there): '
           || group_concat(a.name, ', ') || '. Move an account that holds money below another (Assets or Liabilities; in German, Aktiva or Passiva) to serve it.'
    FROM accounts AS a
    JOIN accounts AS parent ON parent.guid = a.parent_guid AND parent.account_type = 'ROOT'
    JOIN commodities AS c ON c.guid = a.commodity_guid AND c.namespace = 'CURRENCY'
    WHERE a.account_type IN (${GNUCASH_MONEY_ACCOUNT_TYPES.map((type) => `'${type}'`).join(', ')})
      AND a.name NOT LIKE '%-' || c.mnemonic
      AND EXISTS (SELECT 1 FROM splits WHERE splits.account_guid = a.guid)
    HAVING count(*) > 0
    UNION ALL
    SELECT 'accounts in another currency are not served (the service serves euros only): '
           || group_concat(a.name || ' (' || c.mnemonic || ')', ', ') || '.'
    FROM accounts AS a
    JOIN commodities AS c ON c.guid = a.commodity_guid
    WHERE a.guid IN (${moneyAccounts(false)}) AND a.guid NOT IN (${moneyAccounts(true)})
      AND EXISTS (SELECT 1 FROM splits WHERE splits.account_guid = a.guid)
    HAVING count(*) > 0
    UNION ALL
    SELECT moved || ' of the book''s ' || total || ' transactions are dated at another time of day than GnuCash''s 10:59 UTC'
           || ' (by GnuCash before 2.6.20, which dated at local midnight, or by an importer or a script): each is served'
           || ' on the day its time falls on in this service''s time zone, ' || zone_offset(1) || ' in January and '
           || zone_offset(7) || ' in July (TZ, else the system''s setting), as GnuCash shows it in the time zone it runs in; '
           || midnight || ' of them fall on midnight here. If GnuCash runs in another time zone, run the service with TZ'
           || ' set to it (TZ=Europe/Berlin).'
    FROM (SELECT count(*) AS total,
                 coalesce(sum(substr(${POSTED}, 12, 8) <> '10:59:00'), 0) AS moved,
                 coalesce(sum(substr(${POSTED}, 12, 8) <> '10:59:00' AND local_time(${POSTED}) = '00:00:00'), 0) AS midnight
          FROM transactions AS t)
    WHERE moved > 0
    UNION ALL${sharedAccountNames(SERVED_ACCOUNTS, 'GnuCash')}`,
};

/** 'YYYY-MM-DD' of the day before `day` (a valid date; the query validator made sure); the year 0 stays. */
function dayBefore(day: string): string {
  return isoDate(dayNumber(day) - 1);
}

/** 'YYYY-MM-DD' of the day after `day`; the last day of the year 9999 stays. */
function dayAfter(day: string): string {
  return isoDate(dayNumber(day) + 1);
}
