// Booking ids for applications whose own ids are text (uuids, guids): the contract's `id`
// is a whole number, and it must stay the same for the same booking.
//
// The id is the first 13 hexadecimal digits of the application's random id, read as a
// number (52 bits, below 2^53, so exact in JSON). Unlike the table's rowid it survives a
// VACUUM (which may renumber the rowids of a table without an INTEGER PRIMARY KEY) and is
// the same in every copy of a synced file. Two bookings share an id only if their random
// ids agree in 52 bits: for 100,000 bookings the chance is about one in a million
// (100,000² / 2^53); `check` verifies that the ids of the file are unique.

/** SQL for the number of the first 13 hex digits of `column`, ignoring dashes; NULL unless they are hex digits. */
export function hexPrefixId(column: string): string {
  const hex = `lower(replace(${column}, '-', ''))`;
  const digit = (i: number): string => `(instr('0123456789abcdef', substr(${hex}, ${i + 1}, 1)) - 1)`;
  const digits = Array.from({ length: 13 }, (_, i) => `(${digit(i)} << ${4 * (12 - i)})`).join(' | ');
  return `CASE WHEN substr(${hex}, 1, 13) GLOB '[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]' THEN ${digits} END`;
}

/** The same number in JavaScript, for tests and for telling an admin which booking an id is. */
export function hexPrefixIdOf(text: string): number {
  return Number.parseInt(text.replaceAll('-', '').slice(0, 13), 16);
}
