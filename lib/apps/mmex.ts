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
// - a transfer from an account to itself is an asset revaluation (1.9.1+): it moves no
//   money, and MMEX counts it as 0 in every balance (TrxData::account_flow);
// - MMEX shows an amount as fmt::format("{:.2f}", amount + 1e-10) for a currency of SCALE
//   100 (CurrencyModel::toString): 1.005, stored by an import, is shown as 1.01;
// - a split has `CATEGID -1` and its parts in `SPLITTRANSACTIONS_V1`; the row holds the total;
// - categories nest to any depth (`PARENTID`); MMEX names one by its whole path, joined by
//   the delimiter of INFOTABLE_V1's CATEG_DELIMITER, ':' by default
//   (CategoryModel::get_data_fullname);
// - a transaction in the trash has a `DELETEDTIME`; a void one `STATUS 'V'`;
// - each account has its currency (`ACCOUNTLIST_V1.CURRENCYID` → `CURRENCYFORMATS_V1`).
//
// Served: one booking per transaction that is neither void nor in the trash nor an asset
// revaluation, in every account whose currency is EUR; a split as one booking with its
// total (no category); the category by its whole path, as MMEX shows it.
// A transfer is two bookings, one per account (each only if that account is in EUR): the
// sending side under TRANSID, the receiving side under -TRANSID, so ids stay unique and
// stable. Amounts are the cents MMEX shows for its REAL numbers, computed exactly in
// integers (shownCents). A euro currency of another SCALE is refused: MMEX would show
// other than cents.
// The window is read by MMEX's own index on TRANSDATE.

import type { ApplicationMapping } from '../mapping.js';
import { endOfDay } from '../query.js';
import { storedDay } from './day.js';

// A category as MMEX shows it: its whole path (CategoryModel::get_data_fullname), up to a
// parent that is missing (a damaged file) and at most 100 levels (a cycle would never end).
const CATEGORY = `(WITH RECURSIVE up(parent, path, depth) AS (
    SELECT c.PARENTID, c.CATEGNAME, 0 FROM CATEGORY_V1 AS c WHERE c.CATEGID = t.CATEGID
    UNION ALL
    SELECT p.PARENTID, p.CATEGNAME || (SELECT coalesce(
             (SELECT INFOVALUE FROM INFOTABLE_V1 WHERE INFONAME = 'CATEG_DELIMITER'), ':')) || up.path, up.depth + 1
    FROM up JOIN CATEGORY_V1 AS p ON p.CATEGID = up.parent
    WHERE up.parent > 0 AND up.depth < 100)
  SELECT path FROM up ORDER BY depth DESC LIMIT 1)`;

// The cents MMEX shows for the REAL `column`: fmt's "{:.2f}" of column + 1e-10, which
// rounds the binary number exactly, a tie to even (a half cent, plus 1e-10, goes up). Where
// column × 100 lies farther than 0.4999 from a half (every amount in whole cents, and most others), that is round(column
// × 100): for |column| ≤ 10^9 its error is below 2^-16, and 1e-10 moves it by 10^-8, so
// neither crosses the half. Near a half, exactly in integers: a = |column + 1e-10| = i + f,
// f = m / 2^52 + m2 / 2^104 (both exact for a ≥ 2^-52), f × 100 compared with the half.
// A column that holds no number (text MMEX could not read as one, a BLOB, NULL) is NULL,
// refused, where SQLite's arithmetic would read it as 0.
const TWO52 = '4503599627370496';
const HALF = '2251799813685248';
const TWO104 = '20282409603651670423947251286016';
export const shownCents = (column: string): string => {
  const x = `(${column} + 1e-10)`;
  const exact = `(SELECT i * 100 + q + CASE WHEN r > ${HALF} THEN 1 WHEN r < ${HALF} - 100 THEN 0
      WHEN (r - ${HALF}) * ${TWO52} + m2 * 100 > 0 THEN 1 WHEN (r - ${HALF}) * ${TWO52} + m2 * 100 < 0 THEN 0
      ELSE q % 2 END
    FROM (SELECT i, m * 100 / ${TWO52} AS q, m * 100 % ${TWO52} AS r,
                 CAST((f - m / ${TWO52}.0) * ${TWO104}.0 AS INTEGER) AS m2
      FROM (SELECT i, f, CAST(f * ${TWO52}.0 AS INTEGER) AS m
        FROM (SELECT CAST(a AS INTEGER) AS i, a - CAST(a AS INTEGER) AS f FROM (SELECT abs${x} AS a)))))`;
  return `(CASE WHEN typeof(${column}) NOT IN ('real', 'integer') THEN NULL
      WHEN ${column} * 100 - round(${column} * 100) BETWEEN -0.4999 AND 0.4999 AND ${column} BETWEEN -1e9 AND 1e9
      THEN CAST(round(${column} * 100) AS INTEGER)
      ELSE CASE WHEN ${x} < 0 THEN -1 ELSE 1 END * ${exact} END)`;
};
const cents = shownCents;
const subject = (counterpart: string): string => `
  coalesce(${counterpart}, '')
    || CASE WHEN coalesce(${counterpart}, '') <> '' AND coalesce(t.NOTES, '') <> '' THEN ': ' ELSE '' END
    || coalesce(t.NOTES, '')`;
// The transactions that count (not void, not in the trash). CROSS JOIN keeps
// CHECKINGACCOUNT_V1 first, read by its TRANSDATE index for a window: joined the other
// way, the planner may walk IDX_CHECKINGACCOUNT_ACCOUNT, every transaction of each account.
const VALID = `(t.DELETEDTIME IS NULL OR t.DELETEDTIME = '')
    AND coalesce(t.STATUS, '') <> 'V'
    AND NOT (t.TRANSCODE = 'Transfer' AND t.TOACCOUNTID = t.ACCOUNTID)`;

// `window`: the condition on TRANSDATE followed by AND, or none.
const bookings = (window: string): string => `
    SELECT t.TRANSID AS id,
           ${storedDay('t.TRANSDATE')} AS date,
           CASE WHEN t.TRANSCODE = 'Deposit' THEN -${cents('t.TRANSAMOUNT')} ELSE ${cents('t.TRANSAMOUNT')} END AS amount_cents,
           NULL AS amount_held,
           ${subject("CASE WHEN t.TRANSCODE = 'Transfer' THEN other.ACCOUNTNAME ELSE p.PAYEENAME END")} AS subject,
           ${CATEGORY} AS category,
           a.ACCOUNTNAME AS payment_method
    FROM CHECKINGACCOUNT_V1 AS t
    CROSS JOIN ACCOUNTLIST_V1 AS a ON a.ACCOUNTID = t.ACCOUNTID
    CROSS JOIN CURRENCYFORMATS_V1 AS cur ON cur.CURRENCYID = a.CURRENCYID AND cur.CURRENCY_SYMBOL = 'EUR'
    LEFT JOIN ACCOUNTLIST_V1 AS other ON other.ACCOUNTID = t.TOACCOUNTID
    LEFT JOIN PAYEE_V1 AS p ON p.PAYEEID = t.PAYEEID
    WHERE ${window}${VALID} AND t.TRANSCODE IN ('Withdrawal', 'Deposit', 'Transfer')
    UNION ALL
    SELECT -t.TRANSID AS id,
           ${storedDay('t.TRANSDATE')} AS date,
           -${cents('coalesce(t.TOTRANSAMOUNT, t.TRANSAMOUNT)')} AS amount_cents,
           NULL AS amount_held,
           ${subject('a.ACCOUNTNAME')} AS subject,
           ${CATEGORY} AS category,
           other.ACCOUNTNAME AS payment_method
    FROM CHECKINGACCOUNT_V1 AS t
    CROSS JOIN ACCOUNTLIST_V1 AS other ON other.ACCOUNTID = t.TOACCOUNTID
    CROSS JOIN CURRENCYFORMATS_V1 AS cur ON cur.CURRENCYID = other.CURRENCYID AND cur.CURRENCY_SYMBOL = 'EUR'
    LEFT JOIN ACCOUNTLIST_V1 AS a ON a.ACCOUNTID = t.ACCOUNTID
    WHERE ${window}${VALID} AND t.TRANSCODE = 'Transfer'`;

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
    CURRENCYFORMATS_V1: ['CURRENCYID', 'CURRENCY_SYMBOL', 'SCALE'],
    CATEGORY_V1: ['CATEGID', 'CATEGNAME', 'PARENTID'],
    PAYEE_V1: ['PAYEEID', 'PAYEENAME'],
    INFOTABLE_V1: ['INFONAME', 'INFOVALUE'],
  },
  bookings: bookings('t.TRANSDATE BETWEEN +:from AND +:to AND '),
  // Every transaction, also one whose TRANSDATE no window admits (NULL, or text that is no date).
  allBookings: bookings(''),
  // '2026-03-14T00:00:00' and, from files before schema 20, '2026-03-14': the last day whole.
  window: (von, bis) => ({ from: von, to: endOfDay(bis) }),
  windowIndex: { name: 'IDX_CHECKINGACCOUNT_TRANSDATE' },
  exactWindow: true,
  notes: `
    SELECT count(*) || ' asset revaluation' || CASE WHEN count(*) = 1 THEN ' is' ELSE 's are' END
           || ' not served (a transfer from an account to itself): MMEX counts ' || CASE WHEN count(*) = 1 THEN 'it' ELSE 'them' END
           || ' as 0, as moving no money.'
    FROM CHECKINGACCOUNT_V1 AS t
    WHERE t.TRANSCODE = 'Transfer' AND t.TOACCOUNTID = t.ACCOUNTID
      AND (t.DELETEDTIME IS NULL OR t.DELETEDTIME = '') AND coalesce(t.STATUS, '') <> 'V'
    HAVING count(*) > 0
    UNION ALL
    SELECT count(*) || ' amount' || CASE WHEN count(*) = 1 THEN ' has' ELSE 's have' END
           || ' more than two decimals (written by an import or another program), served as MMEX shows them:'
           || ' rounded to the cent, 1.005 as 1.01.'
    FROM CHECKINGACCOUNT_V1 AS t
    WHERE (t.DELETEDTIME IS NULL OR t.DELETEDTIME = '') AND coalesce(t.STATUS, '') <> 'V'
      AND (abs(t.TRANSAMOUNT * 100 - round(t.TRANSAMOUNT * 100)) > 1e-6
           OR abs(coalesce(t.TOTRANSAMOUNT, 0) * 100 - round(coalesce(t.TOTRANSAMOUNT, 0) * 100)) > 1e-6)
    HAVING count(*) > 0`,
  // MMEX shows an amount with the decimals of its currency's SCALE (CurrencyData::precision):
  // only with 100 are they cents.
  refusals: `
    SELECT 'the euro''s SCALE in Money Manager Ex is '
           || CASE WHEN typeof(cur.SCALE) = 'integer' THEN cur.SCALE ELSE 'not a whole number' END
           || ', so MMEX shows euro amounts with other than two decimals, and the service answers whole cents only:'
           || ' set the euro''s scale back to 100 in MMEX''s currency dialog to serve this file.'
    FROM CURRENCYFORMATS_V1 AS cur
    WHERE cur.CURRENCY_SYMBOL = 'EUR' AND cur.SCALE IS NOT 100
      AND EXISTS (SELECT 1 FROM ACCOUNTLIST_V1 AS a WHERE a.CURRENCYID = cur.CURRENCYID)`,
};
