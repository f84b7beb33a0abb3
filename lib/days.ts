// Calendar dates as whole day numbers (days since 1970-01-01, proleptic Gregorian), so that
// windows and days apart are integer arithmetic; no Date object, which reads years 0–99 as
// 1900–1999.

/** `'2026-03-14'` → its day number. The text must be a valid `YYYY-MM-DD` date. */
export function dayNumber(iso: string): number {
  const year = Number(iso.slice(0, 4));
  const month = Number(iso.slice(5, 7));
  const day = Number(iso.slice(8, 10));
  // H. Hinnant, "chrono-Compatible Low-Level Date Algorithms", days_from_civil.
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** A day number → `YYYY-MM-DD`, clamped to the years 0000–9999 that such a text can hold. */
export function isoDate(days: number): string {
  const clamped = Math.min(Math.max(days, FIRST_DAY), LAST_DAY);
  // civil_from_days, the inverse of the above.
  const z = clamped + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

const FIRST_DAY = -719_528; // 0000-01-01
const LAST_DAY = 2_932_896; // 9999-12-31
