// Money Manager Ex (moneymanagerex.org): its database file (.mmb), as the tables.sql and
// the upgrade scripts of its database repository leave it (schema version 20 and later;
// deletion into the trash needs version 16). docs/applications.md, "Money Manager Ex",
// says what is served.
//
// MMEX's rules, read from tables.sql and its transaction model:
// - `CHECKINGACCOUNT_V1`: one row per transaction, integer `TRANSID`; `TRANSDATE` text,
//   '2026-03-14T00:00:00' since schema 20 (the upgrade appends 'T00:00:00' to older dates);
// - `TRANSAMOUNT` a REAL number, always positive; `TRANSCODE` Withdrawal, Deposit or
//   Transfer says the direction;
// - a transfer is ONE row: `TRANSAMOUNT` leaves `ACCOUNTID`, `TOTRANSAMOUNT` (in the
//   receiving account's currency) arrives in `TOACCOUNTID`;
// - a split has `CATEGID -1` and its parts in `SPLITTRANSACTIONS_V1`; the row holds the total;
// - a transaction in the trash has a `DELETEDTIME`; a void one `STATUS 'V'`;
// - each account has its currency (`ACCOUNTLIST_V1.CURRENCYID` → `CURRENCYFORMATS_V1`).
//
// Served: one booking per transaction that is neither void nor in the trash, in every
// account whose currency is EUR; a split as one booking with its total (no category).
// A transfer is two bookings, one per account (each only if that account is in EUR): the
// sending side under TRANSID, the receiving side under -TRANSID, so ids stay unique and
// stable. Amounts are rounded to the cent from MMEX's REAL numbers (SQLite's round()).
// The window is read by MMEX's own index on TRANSDATE.

import type { ApplicationMapping } from '../mapping.js';

// MMEX's category names: a subcategory is shown as 'Parent:Child'.
const CATEGORY = "CASE WHEN parent.CATEGNAME IS NULL THEN c.CATEGNAME ELSE parent.CATEGNAME || ':' || c.CATEGNAME END";
const cents = (column: string): string => `CAST(round(${column} * 100) AS INTEGER)`;
const subject = (counterpart: string): string => `
  coalesce(${counterpart}, '')
    || CASE WHEN coalesce(${counterpart}, '') <> '' AND coalesce(t.NOTES, '') <> '' THEN ': ' ELSE '' END
    || coalesce(t.NOTES, '')`;
// The transactions of the window that count (not void, not in the trash). CROSS JOIN keeps
// CHECKINGACCOUNT_V1 first, read by its TRANSDATE index: joined the other way, the planner
// may walk IDX_CHECKINGACCOUNT_ACCOUNT, every transaction of each account.
const VALID_IN_WINDOW = `t.TRANSDATE BETWEEN +:from AND +:to
    AND (t.DELETEDTIME IS NULL OR t.DELETEDTIME = '')
    AND coalesce(t.STATUS, '') <> 'V'`;

export const mmex: ApplicationMapping = {
  kind: 'application',
  name: 'mmex',
  title: 'Money Manager Ex',
  requires: {
    CHECKINGACCOUNT_V1: [
      'TRANSID',
      'ACCOUNTID',
      'TOACCOUNTID',
      'PAYEEID',
      'TRANSCODE',
      'TRANSAMOUNT',
      'STATUS',
      'NOTES',
      'CATEGID',
      'TRANSDATE',
      'DELETEDTIME',
      'TOTRANSAMOUNT',
    ],
    ACCOUNTLIST_V1: ['ACCOUNTID', 'ACCOUNTNAME', 'CURRENCYID'],
    CURRENCYFORMATS_V1: ['CURRENCYID', 'CURRENCY_SYMBOL'],
    CATEGORY_V1: ['CATEGID', 'CATEGNAME', 'PARENTID'],
    PAYEE_V1: ['PAYEEID', 'PAYEENAME'],
  },
  bookings: `
    SELECT t.TRANSID AS id,
           substr(t.TRANSDATE, 1, 10) AS date,
           CASE WHEN t.TRANSCODE = 'Deposit' THEN -${cents('t.TRANSAMOUNT')} ELSE ${cents('t.TRANSAMOUNT')} END AS amount_cents,
           ${subject("CASE WHEN t.TRANSCODE = 'Transfer' THEN other.ACCOUNTNAME ELSE p.PAYEENAME END")} AS subject,
           ${CATEGORY} AS category,
           a.ACCOUNTNAME AS payment_method
    FROM CHECKINGACCOUNT_V1 AS t
    CROSS JOIN ACCOUNTLIST_V1 AS a ON a.ACCOUNTID = t.ACCOUNTID
    CROSS JOIN CURRENCYFORMATS_V1 AS cur ON cur.CURRENCYID = a.CURRENCYID AND cur.CURRENCY_SYMBOL = 'EUR'
    LEFT JOIN ACCOUNTLIST_V1 AS other ON other.ACCOUNTID = t.TOACCOUNTID
    LEFT JOIN PAYEE_V1 AS p ON p.PAYEEID = t.PAYEEID
    LEFT JOIN CATEGORY_V1 AS c ON c.CATEGID = t.CATEGID
    LEFT JOIN CATEGORY_V1 AS parent ON parent.CATEGID = c.PARENTID
    WHERE ${VALID_IN_WINDOW} AND t.TRANSCODE IN ('Withdrawal', 'Deposit', 'Transfer')
    UNION ALL
    SELECT -t.TRANSID AS id,
           substr(t.TRANSDATE, 1, 10) AS date,
           -${cents('coalesce(t.TOTRANSAMOUNT, t.TRANSAMOUNT)')} AS amount_cents,
           ${subject('a.ACCOUNTNAME')} AS subject,
           ${CATEGORY} AS category,
           other.ACCOUNTNAME AS payment_method
    FROM CHECKINGACCOUNT_V1 AS t
    CROSS JOIN ACCOUNTLIST_V1 AS other ON other.ACCOUNTID = t.TOACCOUNTID
    CROSS JOIN CURRENCYFORMATS_V1 AS cur ON cur.CURRENCYID = other.CURRENCYID AND cur.CURRENCY_SYMBOL = 'EUR'
    LEFT JOIN ACCOUNTLIST_V1 AS a ON a.ACCOUNTID = t.ACCOUNTID
    LEFT JOIN CATEGORY_V1 AS c ON c.CATEGID = t.CATEGID
    LEFT JOIN CATEGORY_V1 AS parent ON parent.CATEGID = c.PARENTID
    WHERE ${VALID_IN_WINDOW} AND t.TRANSCODE = 'Transfer'`,
  // '2026-03-14T00:00:00' and, from files before schema 20, '2026-03-14': '~' sorts after
  // both 'T' and the end of the text, so the last day is included whole.
  window: (von, bis) => ({ from: von, to: `${bis}~` }),
  windowIndex: { name: 'IDX_CHECKINGACCOUNT_TRANSDATE' },
  exactWindow: true,
};
