// Booking ids for applications whose own ids are text (uuids, guids): the contract's `id`
// is a whole number, and it must stay the same for the same booking.
//
// The id is a number made of 13 hexadecimal digits of the application's random id: its
// first 12 and the 14th (dashes left out). The 13th is skipped: in a version-4 uuid — what
// Actual writes, and what GnuCash writes without dashes — it is the version digit, `4` in
// every id, so the first 13 would carry only 48 random bits. These 13 carry 52, below
// 2^53, so the number is exact in JSON. Unlike the table's rowid it survives a VACUUM
// (which may renumber the rowids of a table without an INTEGER PRIMARY KEY) and is the same
// in every copy of a synced file. Two bookings share an id only if their random ids agree
// in those 52 bits: for 100,000 bookings the chance is about one in a million
// (100,000² / 2^53); `check` verifies that the ids of a sample of the file are unique.

// Positions (1-based, in the id without dashes) of the 13 digits, most significant first.
const DIGITS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14];

/** SQL for the number of the 13 hex digits of `column` (above); NULL unless they are hex digits. */
export function hexPrefixId(column: string): string {
  const hex = `lower(replace(${column}, '-', ''))`;
  const digit = (position: number): string => `(instr('0123456789abcdef', substr(${hex}, ${position}, 1)) - 1)`;
  const value = DIGITS.map((position, i) => `(${digit(position)} << ${4 * (DIGITS.length - 1 - i)})`).join(' | ');
  const isHex = `substr(${hex}, 1, 14) GLOB '${'[0-9a-f]'.repeat(14)}'`;
  return `CASE WHEN ${isHex} THEN ${value} END`;
}

/** The same number in JavaScript, for tests and for telling an admin which booking an id is. */
export function hexPrefixIdOf(text: string): number {
  const hex = text.replaceAll('-', '').toLowerCase();
  return Number.parseInt(DIGITS.map((position) => hex[position - 1] ?? '').join(''), 16);
}
