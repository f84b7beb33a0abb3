// Search rows → the JSON text of docs/API.md's response, written by hand so that `betrag`
// is the exact decimal of the stored cents and the keys stand in the contract's order.

import { formatEuros } from './money.js';
import type { SearchRows } from './search.js';

export const EMPTY_RESULT = '{"anzahl":0,"buchungen":[]}';

/** `{"anzahl": <int>, "buchungen": [<booking>...]}`, non-ASCII left unescaped. */
export function formatSearchResult({ count, rows }: SearchRows): string {
  let bookings = '';
  for (const [id, date, amountCents, subject, category, paymentMethod] of rows) {
    if (bookings !== '') bookings += ',';
    // docs/API.md, Sign convention: betrag = -amount_cents / 100.
    bookings += `{"id":${id},"datum":${JSON.stringify(date)},"betrag":${formatEuros(-amountCents)},"zweck":${JSON.stringify(subject ?? '')}`;
    if (category !== null) bookings += `,"kategorie":${JSON.stringify(category)}`;
    if (paymentMethod !== null) bookings += `,"konto":${JSON.stringify(paymentMethod)}`;
    bookings += '}';
  }
  return `{"anzahl":${count},"buchungen":[${bookings}]}`;
}
