// Amounts are integer cents from the moment a string is parsed until a booking is
// formatted. Neither direction ever holds a fraction: parsing reads digits into an integer,
// formatting splits a safe integer into euros and cents by integer division, which is
// exact, and writes their digits.

// docs/API.md: optional sign, 1–12 integer digits, optional `.` or `,` with 1–2 decimals,
// that is /^[+-]?[0-9]{1,12}(?:[.,][0-9]{1,2})?$/, read character by character below.
// 12 digits keep every value (and a sum of two) far below Number.MAX_SAFE_INTEGER cents.
const MAX_EURO_DIGITS = 12;

/** `'-12,5'` → `-1250`; `undefined` when the text is not such an amount. */
export function parseAmount(text: string): number | undefined {
  return toCents(text, true);
}

/** Like `parseAmount`, but no sign is allowed: `'0.10'` → `10`. */
export function parseUnsignedAmount(text: string): number | undefined {
  return toCents(text, false);
}

function toCents(text: string, signed: boolean): number | undefined {
  const end = text.length;
  let i = 0;
  let negative = false;
  const first = text.charCodeAt(0);
  if (signed && (first === PLUS || first === MINUS)) {
    negative = first === MINUS;
    i = 1;
  }
  let euros = 0;
  const eurosStart = i;
  for (; i < end; i += 1) {
    const digit = text.charCodeAt(i) - ZERO;
    if (digit < 0 || digit > 9) break;
    euros = euros * 10 + digit;
  }
  const eurosDigits = i - eurosStart;
  if (eurosDigits < 1 || eurosDigits > MAX_EURO_DIGITS) return undefined;
  let cents = euros * 100;
  if (i < end) {
    const separator = text.charCodeAt(i);
    if (separator !== DOT && separator !== COMMA) return undefined;
    const decimals = end - i - 1;
    if (decimals < 1 || decimals > 2) return undefined;
    const tenths = text.charCodeAt(i + 1) - ZERO;
    const hundredths = decimals === 2 ? text.charCodeAt(i + 2) - ZERO : 0;
    if (tenths < 0 || tenths > 9 || hundredths < 0 || hundredths > 9) return undefined;
    cents += tenths * 10 + hundredths;
  }
  // `|| 0` turns `-0` into `0`.
  return (negative ? -cents : cents) || 0;
}

const PLUS = 0x2b;
const MINUS = 0x2d;
const DOT = 0x2e;
const COMMA = 0x2c;
const ZERO = 0x30;

/**
 * Integer cents → the decimal text of a JSON number in euros, exact to the digit:
 * `-1250` → `'-12.5'`, `3000` → `'30'`, `5` → `'0.05'`. Throws on anything but a
 * safe integer, because no other value can be formatted exactly.
 */
export function formatEuros(cents: number): string {
  if (!Number.isSafeInteger(cents)) {
    throw new RangeError(`amount is not a whole number of cents: ${String(cents)}`);
  }
  // Integer arithmetic on a safe integer is exact: the euros and the cents apart, then the
  // cents without trailing zeros (`.5`, `.05`, `.25`, none for whole euros).
  const negative = cents < 0;
  const abs = negative ? -cents : cents;
  const fraction = abs % 100;
  const euros = (abs - fraction) / 100;
  const text =
    fraction === 0
      ? `${euros}`
      : fraction % 10 === 0
        ? `${euros}.${fraction / 10}`
        : `${euros}.${fraction < 10 ? '0' : ''}${fraction}`;
  return negative ? `-${text}` : text;
}
