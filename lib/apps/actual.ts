// Actual Budget (actualbudget.org): the budget file `db.sqlite` in the budget's folder, as
// Actual's own migrations leave it. docs/applications.md, "Actual", says what is served.
//
// Actual's rules, read from its migrations and its view v_transactions_internal:
// - `transactions`: one row per transaction, text (uuid) ids; `acct` the account;
//   `category` and `description` (the payee) go through `category_mapping` and
//   `payee_mapping` (merged categories and payees point elsewhere);
// - `date` is an integer, 20260314; `amount` integer cents, expenses NEGATIVE;
// - a split is a parent row (`isParent = 1`, the whole amount) with child rows
//   (`isChild = 1`, `parent_id`); a deleted row has `tombstone = 1`;
// - a transfer is two rows, one in each account, linked by `transferred_id`;
// - there is no currency per account; the budget's currency is its synced preference
//   `defaultCurrencyCode` (table `preferences`, Settings › Currency), an ISO code, empty or
//   absent where none was chosen.
//
// Served: one booking per transaction in any account that is not deleted: a plain row, or
// the parent of a split with its whole amount (the children are its parts, not payments
// of their own; the parent has no category). Each side of a transfer is a booking in its
// account. The id is made of 13 of the uuid's hex digits (lib/apps/ids.ts). The window is read
// by Actual's own index on `transactions(date)`. A budget whose currency is set to another
// than EUR is refused (the contract knows only euros, and Actual's amounts are that
// currency's); one without a currency is served as euros, the admin's choice.

import type { ApplicationMapping } from '../mapping.js';
import { hexPrefixId } from './ids.js';
import { sharedAccountNames } from './names.js';

const toActualDate = (isoDate: string): number => Number(isoDate.replaceAll('-', ''));

// CROSS JOIN keeps `transactions` first, read by its date index: joined the other way,
// the planner may walk idx_transactions_acct_tombstone, all of each account.
// `window`: the condition on date followed by AND, or none. A date or an amount that is
// not an INTEGER is NULL, refused, where SQLite's arithmetic would read text as 0.
const bookings = (window: string): string => `
    SELECT ${hexPrefixId('t.id')} AS id,
           CASE WHEN typeof(t.date) = 'integer'
                THEN printf('%04d-%02d-%02d', t.date / 10000, t.date / 100 % 100, t.date % 100) END AS date,
           CASE WHEN typeof(t.amount) = 'integer' THEN -t.amount END AS amount_cents,
           NULL AS amount_held,
           coalesce(nullif(p.name, ''), other.name, '')
             || CASE WHEN coalesce(nullif(p.name, ''), other.name, '') <> '' AND coalesce(t.notes, '') <> ''
                     THEN ': ' ELSE '' END
             || coalesce(t.notes, '') AS subject,
           c.name AS category,
           a.name AS payment_method,
           t.date AS order_date
    FROM transactions AS t
    CROSS JOIN accounts AS a ON a.id = t.acct AND a.tombstone = 0
    LEFT JOIN payee_mapping AS pm ON pm.id = t.description
    LEFT JOIN payees AS p ON p.id = pm.targetId
    LEFT JOIN accounts AS other ON other.id = p.transfer_acct
    LEFT JOIN category_mapping AS cm ON cm.id = t.category AND t.isParent = 0
    LEFT JOIN categories AS c ON c.id = cm.transferId AND c.tombstone = 0
    WHERE ${window} t.tombstone = 0 AND t.isChild = 0`;

export const actual: ApplicationMapping = {
  kind: 'application',
  name: 'actual',
  title: 'Actual',
  requires: {
    transactions: [
      'id',
      'isParent',
      'isChild',
      'acct',
      'category',
      'amount',
      'description',
      'notes',
      'date',
      'tombstone',
    ],
    accounts: ['id', 'name', 'tombstone'],
    category_mapping: ['id', 'transferId'],
    categories: ['id', 'name', 'tombstone'],
    payee_mapping: ['id', 'targetId'],
    payees: ['id', 'name', 'transfer_acct'],
    preferences: ['id', 'value'],
  },
  bookings: bookings('t.date BETWEEN +:from AND +:to AND'),
  // Every transaction, also one whose date no window admits (NULL, text, a REAL).
  allBookings: bookings(''),
  window: (von, bis) => ({ from: toActualDate(von), to: toActualDate(bis) }),
  windowIndex: { name: 'trans_date' },
  exactWindow: true,
  // 20260314 sorts as '2026-03-14' does: the newest bookings come out of trans_date in order.
  orderDate: true,
  notes: sharedAccountNames('SELECT name, name AS shown FROM accounts WHERE tombstone = 0', 'Actual'),
  // The currency is the budget's setting, whether or not Actual's currency feature
  // (flags.currency) shows its symbol now: the amounts are in it either way. The value is
  // repeated only when it is an ISO code: a sentence for a terminal and a log carries
  // nothing else from the file.
  refusals: `
    SELECT 'the budget is kept in '
           || CASE WHEN value GLOB '[A-Z][A-Z][A-Z]' THEN value ELSE 'another currency than euros' END
           || ' (its currency in Actual''s settings, defaultCurrencyCode),'
           || ' and the service answers in euros only: it does not serve this budget.'
    FROM preferences WHERE id = 'defaultCurrencyCode' AND value <> '' AND value <> 'EUR'`,
};
