// Amounts are integer cents from the moment a string is parsed until a booking is
// formatted. Neither direction uses floating-point arithmetic: parsing reads digits,
// formatting writes digits.

// docs/API.md: optional sign, 1–12 integer digits, optional `.` or `,` with 1–2 decimals.
// 12 digits keep every value (and a sum of two) far below Number.MAX_SAFE_INTEGER cents.
const SIGNED_AMOUNT = /^([+-]?)([0-9]{1,12})(?:[.,]([0-9]{1,2}))?$/;
const UNSIGNED_AMOUNT = /^()([0-9]{1,12})(?:[.,]([0-9]{1,2}))?$/;

/** `'-12,5'` → `-1250`; `undefined` when the text is not such an amount. */
export function parseAmount(text: string): number | undefined {
  return toCents(SIGNED_AMOUNT.exec(text));
}

/** Like `parseAmount`, but no sign is allowed: `'0.10'` → `10`. */
export function parseUnsignedAmount(text: string): number | undefined {
  return toCents(UNSIGNED_AMOUNT.exec(text));
}

function toCents(match: RegExpExecArray | null): number | undefined {
  if (match === null) return undefined;
  const [, sign, euros = '', decimals = ''] = match;
  const cents = Number(euros) * 100 + Number(decimals.padEnd(2, '0'));
  // `|| 0` turns `-0` into `0`.
  return (sign === '-' ? -cents : cents) || 0;
}

/**
 * Integer cents → the decimal text of a JSON number in euros, exact to the digit:
 * `-1250` → `'-12.5'`, `3000` → `'30'`, `5` → `'0.05'`. Throws on anything but a
 * safe integer, because no other value can be formatted exactly.
 */
export function formatEuros(cents: number): string {
  if (!Number.isSafeInteger(cents)) {
    throw new RangeError(`amount is not a whole number of cents: ${String(cents)}`);
  }
  const digits = String(Math.abs(cents)).padStart(3, '0');
  const euros = digits.slice(0, -2);
  const fraction = digits.slice(-2).replace(/0+$/, '');
  const sign = cents < 0 ? '-' : '';
  return fraction === '' ? sign + euros : `${sign}${euros}.${fraction}`;
}
