// A UTC time's local day, time of day and the zone's offset, by Node.js' own time zone data
// (ICU: TZ, else the system's zone), as SQL functions for a mapping (ApplicationMapping,
// functions). SQLite's 'localtime' asks the C runtime, which on Windows ignores
// TZ=Europe/Berlin and answers in the system's zone; this answers alike on every platform.

import { isCalendarDate } from '../query.js';

type Value = string | number | bigint | Buffer | null;

/**
 * Milliseconds of 'YYYY-MM-DD hh:mm:ss' read as UTC, or `undefined`; also for a day the
 * calendar does not have, which Date.parse would roll over into the next month (a guessed date).
 */
function utcMilliseconds(text: Value): number | undefined {
  if (typeof text !== 'string' || !/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(text)) return undefined;
  if (!isCalendarDate(text.slice(0, 10))) return undefined;
  const ms = Date.parse(`${text.replace(' ', 'T')}Z`);
  return Number.isNaN(ms) ? undefined : ms;
}

const two = (n: number): string => String(n).padStart(2, '0');

/** `local_date(utc)`: 'YYYY-MM-DD' of the local day, as date(utc, 'localtime'); NULL for what is not such a time. */
function localDate(utc: Value): string | null {
  const ms = utcMilliseconds(utc);
  if (ms === undefined) return null;
  const local = new Date(ms);
  const year = local.getFullYear();
  if (year < 0 || year > 9999) return null;
  return `${String(year).padStart(4, '0')}-${two(local.getMonth() + 1)}-${two(local.getDate())}`;
}

/** `local_time(utc)`: 'hh:mm:ss' of the local time of day, as time(utc, 'localtime'). */
function localTime(utc: Value): string | null {
  const ms = utcMilliseconds(utc);
  if (ms === undefined) return null;
  const local = new Date(ms);
  return `${two(local.getHours())}:${two(local.getMinutes())}:${two(local.getSeconds())}`;
}

/** `zone_offset(month)`: the local zone's offset from UTC on the 15th of `month` (1–12) this year, as 'UTC+01:00'. */
function zoneOffset(month: Value): string | null {
  if (typeof month !== 'number' && typeof month !== 'bigint') return null;
  const minutes = -new Date(new Date().getFullYear(), Number(month) - 1, 15, 12).getTimezoneOffset();
  const sign = minutes < 0 ? '-' : '+';
  return `UTC${sign}${two(Math.trunc(Math.abs(minutes) / 60))}:${two(Math.abs(minutes) % 60)}`;
}

/** The functions, by the names the mappings' SQL calls them. */
export const LOCAL_TIME_FUNCTIONS = {
  local_date: localDate,
  local_time: localTime,
  zone_offset: zoneOffset,
} as const;
