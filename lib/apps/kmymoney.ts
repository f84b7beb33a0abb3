// KMyMoney (kmymoney.org): a file kept in SQLite by its SQL storage plugin (File › Save
// As, SQLite), as kmymoney/plugins/sql/ writes it (database layout version 12).
// docs/applications.md, "KMyMoney", says what is served.
//
// KMyMoney's rules, read from mymoneydbdef.cpp and mymoneystoragesql_p.h:
// - double entry: a transaction (`kmmTransactions`) has splits (`kmmSplits`, key
//   transactionId + splitId), one per account; ids are text ('A000001',
//   'T000000000000000001'); a transaction without a category has a single split;
// - `postDate` is text, 'YYYY-MM-DD', on the transaction and copied onto each split
//   (files upgraded from old layouts may hold 'YYYY-MM-DDT00:00:00');
// - `shares` (in the account's currency) and `value` (in the transaction's) are text
//   fractions, AlkValue's canonical form: '-25/2' is -12.50, '-1250/1' is -1,250.00;
//   money leaving an asset account is negative;
// - `txType` 'N' is a booking, 'S' a scheduled transaction's template;
// - `kmmAccounts.accountType` is eMyMoney::Account::Type as text ('3' cash), each
//   account has its currency (`currencyId`, an ISO code); KMyMoney has no void, and a
//   deleted transaction is gone.
//
// Served: one booking per split in a money account (checking, savings, cash, credit card,
// asset, liability) whose currency is EUR. The amount is the split's shares, in the
// account's EUR. With one other account: a money account makes it a transfer (subject
// 'Other account: memo', no category), any other account is its category; a split
// transaction, and one without a category (a single split), has none. The subject is
// otherwise 'Payee: memo' (the split's memo, else the transaction's).
// The id is the transaction's number × 1000 + splitId (stable: KMyMoney updates a split
// in place). KMyMoney has no index on dates: without one the search reads every split of
// the money accounts through kmmSplits(accountId, txType); docs/applications.md names the
// index an admin may add.

import type { ApplicationMapping } from '../mapping.js';
import { endOfDay } from '../query.js';
import { storedDay } from './day.js';
import { fractionCents } from './fraction.js';
import { sharedAccountNames } from './names.js';

/** eMyMoney::Account::Type of the accounts that hold money: checking, savings, cash, credit card, asset, liability. */
export const KMYMONEY_MONEY_ACCOUNT_TYPES = ['1', '2', '3', '4', '9', '10'] as const;

/** The index an admin may add to a KMyMoney file; docs/applications.md says what it costs. */
export const KMYMONEY_DATE_INDEX = 'CREATE INDEX kmmSplits_account_date ON kmmSplits (accountId, txType, postDate);';

// `shares` as whole cents (fractionCents): exact when the denominator divides num × 100
// (AlkValue reduces the fraction, so EUR amounts have 1, 2, 4, 5, …, 100). A value without
// '/' is read as num/1. Each part counts only when it is an integer written as SQLite
// writes one back ('-25', not '1.5', 'x' or '007'): anything else is NULL, refused.
const part = (text: string): string =>
  `CASE WHEN CAST(CAST(${text} AS INTEGER) AS TEXT) = ${text} THEN CAST(${text} AS INTEGER) END`;
const SHARES_CENTS = `(
  SELECT ${fractionCents('num', 'den')}
  FROM (SELECT ${part('numText')} AS num, ${part('denText')} AS den
    FROM (SELECT CASE WHEN slash = 0 THEN shares ELSE substr(shares, 1, slash - 1) END AS numText,
                 CASE WHEN slash = 0 THEN '1' ELSE substr(shares, slash + 1) END AS denText
      FROM (SELECT s.shares AS shares, instr(s.shares, '/') AS slash))))`;

const MONEY_TYPES = KMYMONEY_MONEY_ACCOUNT_TYPES.map((type) => `'${type}'`).join(', ');
// `a: b`, or whichever of the two is not empty.
const joined = (a: string, b: string): string =>
  `coalesce(${a}, '') || CASE WHEN coalesce(${a}, '') <> '' AND coalesce(${b}, '') <> '' THEN ': ' ELSE '' END || coalesce(${b}, '')`;
const MEMO = "coalesce(nullif(s.memo, ''), (SELECT memo FROM kmmTransactions WHERE id = s.transactionId))";
const IS_TRANSFER = `other.accountType IN (${MONEY_TYPES})`;

// The money accounts are found once per search; their splits are read by KMyMoney's own
// index kmmSplits(accountId, txType), or by (accountId, txType, postDate) where an admin
// added it, which then reads only the window. `other` is the transaction's other
// account when there is exactly one; it is joined last, for the rows that match.
// `window`: the condition on postDate, or none.
const bookings = (window: string): string => `
    SELECT CAST(substr(s.transactionId, 2) AS INTEGER) * 1000 + s.splitId AS id,
           ${storedDay('s.postDate')} AS date,
           -${SHARES_CENTS} AS amount_cents,
           s.shares AS amount_held,
           CASE WHEN ${IS_TRANSFER} THEN ${joined('other.accountName', MEMO)}
                ELSE ${joined('(SELECT name FROM kmmPayees WHERE id = s.payeeId)', MEMO)} END AS subject,
           CASE WHEN ${IS_TRANSFER} THEN NULL ELSE other.accountName END AS category,
           (SELECT accountName FROM kmmAccounts WHERE id = s.accountId) AS payment_method
    FROM kmmSplits AS s
    LEFT JOIN kmmAccounts AS other ON other.id = (
      SELECT CASE WHEN min(x.accountId) = max(x.accountId) THEN min(x.accountId) END
      FROM kmmSplits AS x WHERE x.transactionId = s.transactionId AND x.splitId <> s.splitId)
    WHERE s.accountId IN (
            SELECT id FROM kmmAccounts WHERE accountType IN (${MONEY_TYPES}) AND currencyId = 'EUR')
      AND s.txType = 'N' ${window}`;

export const kmymoney: ApplicationMapping = {
  kind: 'application',
  name: 'kmymoney',
  title: 'KMyMoney',
  requires: {
    kmmSplits: ['transactionId', 'splitId', 'txType', 'payeeId', 'shares', 'memo', 'accountId', 'postDate'],
    kmmTransactions: ['id', 'memo'],
    kmmAccounts: ['id', 'accountType', 'accountName', 'currencyId'],
    kmmPayees: ['id', 'name'],
  },
  bookings: bookings('AND s.postDate BETWEEN +:from AND +:to'),
  // Every split, also one whose postDate no window admits (NULL, or text that is no date).
  allBookings: bookings(''),
  // 'YYYY-MM-DD' and, from upgraded files, 'YYYY-MM-DDT00:00:00': the last day whole.
  // Exact: a postDate in the window is one of von..bis, or text that is no day (its 500).
  window: (von, bis) => ({ from: von, to: endOfDay(bis) }),
  windowIndex: { name: 'kmmSplits_account_date', create: KMYMONEY_DATE_INDEX },
  exactWindow: true,
  notes: sharedAccountNames(
    `SELECT accountName AS name, accountName AS shown FROM kmmAccounts WHERE accountType IN (${MONEY_TYPES}) AND currencyId = 'EUR'`,
    'KMyMoney',
  ),
};
