// The day of a date an application stores as text with or without a time of day (KMyMoney's
// postDate, MMEX's TRANSDATE), in SQL.

/**
 * `column`'s first ten characters where it is 'YYYY-MM-DD' or 'YYYY-MM-DDThh:mm:ss' (the
 * forms the applications write and their upgrades leave); any other value as it is, so
 * that a text which only begins with a day ('2026-03-14x') is no day to the search (its
 * 500) nor to `check`, never served as the day it begins with. The window still reads the
 * stored column by the application's index.
 */
export const storedDay = (column: string): string =>
  `CASE WHEN length(${column}) = 10 OR substr(${column}, 11) GLOB 'T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]' THEN substr(${column}, 1, 10) ELSE ${column} END`;
