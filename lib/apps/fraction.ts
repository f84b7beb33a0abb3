// A fraction num / den as whole cents in SQL, for the applications that store an amount as
// one (GnuCash's value_num/value_denom, KMyMoney's text 'num/den'), and as the text a
// message shows (lib/search/application-search.ts, fractionAsAmount).

// |num| up to this: num × 100 stays a 64-bit integer, so the remainder below is exact.
const MAX_NUM = '92233720368547758';

/**
 * `num` × 100 / `den` as whole cents when the denominator divides it (EUR's is 100); a REAL
 * with a fraction of a cent otherwise; NULL when num or den is not an INTEGER (text, a
 * REAL, NULL: nothing SQLite's arithmetic would silently read as 0), den is not positive
 * or num lies beyond 64 bits once × 100. The service refuses a booking for either, never
 * a rounded or a made-up amount (a 500 with the reason in the log; `check` names it).
 */
export const fractionCents = (num: string, den: string): string =>
  `CASE WHEN typeof(${num}) = 'integer' AND typeof(${den}) = 'integer' AND ${den} > 0
          AND ${num} BETWEEN -${MAX_NUM} AND ${MAX_NUM}
        THEN CASE WHEN ${num} * 100 % ${den} = 0 THEN ${num} * 100 / ${den} ELSE ${num} * 100.0 / ${den} END END`;

/**
 * `num`/`den` as text where it is no whole number of cents, or more than 2^53 − 1 of them,
 * which JavaScript reads only rounded (NULL otherwise, so that a search pays no text for the
 * rows it answers): the amount as the application holds it, for the message that refuses its booking.
 */
export const fractionHeld = (num: string, den: string): string =>
  `CASE WHEN ${num} * 100 % ${den} <> 0 OR ${num} * 100 / ${den} NOT BETWEEN -${Number.MAX_SAFE_INTEGER} AND ${Number.MAX_SAFE_INTEGER}
     THEN ${num} || '/' || ${den} END`;
