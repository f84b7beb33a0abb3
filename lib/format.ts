// Search rows → the JSON text of docs/API.md's response, written by hand so that `betrag`
// is the exact decimal of the stored cents and the keys stand in the contract's order.

import { formatEuros } from './money.js';
import type { SearchRows } from './search.js';

export const EMPTY_RESULT = '{"anzahl":0,"buchungen":[]}';

/** `{"anzahl": <int>, "buchungen": [<booking>...]}`, non-ASCII left unescaped. */
export function formatSearchResult({ count, rows }: SearchRows): string {
  // `count` and `id` are written as they are: anything but an integer (a view can hand
  // over a text id) would make the text invalid JSON, so it becomes the search's 500.
  if (!Number.isSafeInteger(count)) throw new RangeError(`count is not an integer: ${String(count)}`);
  let bookings = '';
  for (const [id, date, amountCents, subject, category, paymentMethod] of rows) {
    if (!Number.isSafeInteger(id)) throw new RangeError(`booking id is not an integer: ${String(id)}`);
    if (bookings !== '') bookings += ',';
    // docs/API.md, Sign convention: betrag = -amount_cents / 100.
    bookings += `{"id":${id},"datum":${JSON.stringify(date)},"betrag":${formatEuros(-amountCents)},"zweck":${JSON.stringify(subject ?? '')}`;
    if (category !== null) bookings += `,"kategorie":${JSON.stringify(category)}`;
    if (paymentMethod !== null) bookings += `,"konto":${JSON.stringify(paymentMethod)}`;
    bookings += '}';
  }
  return `{"anzahl":${count},"buchungen":[${bookings}]}`;
}
