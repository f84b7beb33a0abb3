// GnuCash (gnucash.org): a book saved in SQLite (File › Save As, Data Format "sqlite3"),
// as GnuCash's SQL backend writes it (libgnucash/backend/sql/). docs/applications.md,
// "GnuCash", says what is served.
//
// GnuCash's rules, read from its SQL backend and from a book its Python bindings wrote:
// - double entry: a transaction (`transactions`) has two or more splits (`splits`), one
//   per account it touches; ids are 32-digit hex guids;
// - `post_date` is text, 'YYYY-MM-DD 10:59:00': the day at 10:59 UTC, GnuCash's "neutral
//   time" (4.13 moves it in the outermost zones: 09:59 at UTC+14, 11:59 at UTC-11), so the
//   date part is the date entered. Books from versions before neutral time hold the local
//   midnight in UTC ('2026-03-13 23:00:00' for the 14th in Berlin); rounding to the
//   nearest day gives the date in both cases (old books: from UTC-11 to UTC+12);
// - a split's amount is a fraction: `value_num/value_denom` in the transaction's currency,
//   `quantity_num/quantity_denom` in the account's commodity; money leaving an asset
//   account is negative;
// - a void transaction keeps its splits with value and quantity 0 and reconcile_state 'v';
//   a deleted one is gone;
// - a transaction without a counter-account gets a split in a top-level account
//   'Imbalance-EUR' (its name translated), of type BANK;
// - each account has its commodity (`commodities`, a currency has namespace 'CURRENCY').
//
// Served: one booking per split in a money account (type CASH, BANK, CREDIT, ASSET or
// LIABILITY) whose commodity is EUR and that is not top-level (GnuCash puts its own
// Imbalance and Orphan accounts, and the templates of scheduled transactions, at the top
// of a tree; the accounts a user keeps money in sit below "Assets" or "Liabilities"), void
// splits left out. The amount is the split's quantity, in the account's EUR. With one
// other account: a money account makes it a transfer (subject 'Other account:
// description', no category), any other account is its category (Imbalance-EUR too, as
// GnuCash's register shows it); a split transaction has no category. The subject is
// otherwise the transaction's description (GnuCash's payee field). The id is the
// split guid's hex digits, 13 of them (lib/apps/ids.ts). The window is read by GnuCash's own
// index on transactions(post_date), then each transaction's splits by splits(tx_guid).

import type { ApplicationMapping } from '../mapping.js';
import { hexPrefixId } from './ids.js';

/** GnuCash's account types that hold money (gnc-account-sql.cpp stores the type as text). */
export const GNUCASH_MONEY_ACCOUNT_TYPES = ['CASH', 'BANK', 'CREDIT', 'ASSET', 'LIABILITY'] as const;

// A fraction as whole cents: exact when the denominator divides num × 100 (EUR's is 100);
// otherwise a REAL with a fraction of a cent, which the service refuses to answer (a 500
// with the reason in the log), never a rounded amount.
const cents = (num: string, denom: string): string =>
  `CASE WHEN ${num} * 100 % ${denom} = 0 THEN ${num} * 100 / ${denom} ELSE ${num} * 100.0 / ${denom} END`;

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
const select = (from: string, account: string, when: string): string => `
    SELECT ${hexPrefixId('s.guid')} AS id,
           CASE WHEN substr(t.post_date, 12, 2) < '12' THEN substr(t.post_date, 1, 10)
                ELSE date(t.post_date, '+12 hours') END AS date,
           -(${cents('s.quantity_num', 's.quantity_denom')}) AS amount_cents,
           CASE WHEN other.guid IN (${moneyAccounts(false)}) THEN ${joined('other.name', 't.description')}
                ELSE coalesce(t.description, '') END AS subject,
           CASE WHEN other.guid IN (${moneyAccounts(false)}) THEN NULL ELSE other.name END AS category,
           (SELECT name FROM accounts WHERE guid = s.account_guid) AS payment_method
    FROM ${from}
    LEFT JOIN accounts AS other ON other.guid = (
      SELECT CASE WHEN min(x.account_guid) = max(x.account_guid) THEN min(x.account_guid) END
      FROM splits AS x WHERE x.tx_guid = s.tx_guid AND x.guid <> s.guid)
    WHERE ${when}
      AND t.post_date BETWEEN +:from AND +:to
      AND s.reconcile_state <> 'v'
      AND ${account} IN (${moneyAccounts(true)})`;

export const gnucash: ApplicationMapping = {
  kind: 'application',
  name: 'gnucash',
  title: 'GnuCash',
  requires: {
    transactions: ['guid', 'post_date', 'description'],
    splits: ['guid', 'tx_guid', 'account_guid', 'reconcile_state', 'quantity_num', 'quantity_denom'],
    accounts: ['guid', 'name', 'account_type', 'commodity_guid', 'parent_guid'],
    commodities: ['guid', 'namespace', 'mnemonic'],
  },
  // CROSS JOIN fixes each way's order. The money accounts are found once per search (a
  // dozen rows), not looked up per split. `other` is the transaction's other account when
  // there is exactly one (a split transaction has several, an unbalanced one none); it is
  // joined last, for the rows that match.
  bookings: `
    ${select('transactions AS t CROSS JOIN splits AS s ON s.tx_guid = t.guid', '+s.account_guid', `${WINDOW_DAYS} <= ${LONG_WINDOW_DAYS}`)}
    UNION ALL
    ${select('splits AS s CROSS JOIN transactions AS t ON t.guid = s.tx_guid', 's.account_guid', `${WINDOW_DAYS} > ${LONG_WINDOW_DAYS}`)}`,
  // The post_date of day D lies in [D-1 12:00:00, D 11:59:59] UTC: rounding to the
  // nearest day (the `date` column above; before noon the day itself, which is every date
  // written in neutral time, so date() runs only for the rest) maps exactly that range to
  // D. GnuCash writes post_date as 'YYYY-MM-DD HH:MM:SS', so the window admits exactly
  // the days von..bis.
  window: (von, bis) => ({ from: `${dayBefore(von)} 12:00:00`, to: `${bis} 11:59:59` }),
  exactWindow: true,
  windowIndex: { name: 'tx_post_date_index' },
  // A money account at the top level holds bookings that are not served. GnuCash's own
  // Imbalance-EUR and Orphan-EUR (their names translated) end in '-' and the currency.
  notes: `
    SELECT 'accounts at the top level are not served (GnuCash keeps its own Imbalance and Orphan accounts there): '
           || group_concat(a.name, ', ') || '. Move an account that holds money below "Assets" or "Liabilities" to serve it.'
    FROM accounts AS a
    JOIN accounts AS parent ON parent.guid = a.parent_guid AND parent.account_type = 'ROOT'
    JOIN commodities AS c ON c.guid = a.commodity_guid AND c.namespace = 'CURRENCY'
    WHERE a.account_type IN (${GNUCASH_MONEY_ACCOUNT_TYPES.map((type) => `'${type}'`).join(', ')})
      AND a.name NOT LIKE '%-' || c.mnemonic
      AND EXISTS (SELECT 1 FROM splits WHERE splits.account_guid = a.guid)
    HAVING count(*) > 0`,
};

/** 'YYYY-MM-DD' of the day before `isoDate` (a valid date; the query validator made sure). */
function dayBefore(isoDate: string): string {
  return new Date(Date.parse(`${isoDate}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}
