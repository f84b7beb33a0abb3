// What a file given as a book is, when it is not a SQLite database: a folder (Actual keeps
// a budget as a folder), or a book saved in an application's default XML format,
// compressed or not; and the first bytes of a file, read without waiting.

import { closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, constants as zlib } from 'node:zlib';
import { shellWord } from '../base/index.js';

/** One line: `file` is not a SQLite database, and what it is where that can be told (empty: truncated, or not written yet). */
export function notADatabase(file: string): string {
  if (readHeader(file, 1).length === 0) return `${file} is empty (0 bytes), not a SQLite database`;
  return `${file} is not a SQLite database${formatHint(file)}`;
}

/** For a folder given as the database: the Actual budget's db.sqlite inside it, if it holds one. */
export function folderHint(dir: string): string {
  const inside = join(dir, 'db.sqlite');
  try {
    if (!statSync(inside).isFile()) return '';
  } catch {
    return '';
  }
  return ` (a folder; Actual keeps each budget as a folder, and the file to serve is ${inside}: --db ${shellWord(inside)} --app actual)`;
}

// A book saved in the applications' default format: XML, gzip-compressed unless the user
// turned compression off. Both start the XML with their own root element.
const GZIP_MAGIC = [0x1f, 0x8b];
const XML_FORMATS = [
  {
    root: /<gnc-v2[\s>]/,
    says: "a GnuCash book in XML (GnuCash's default format)",
    save: 'save it in GnuCash as SQLite (File › Save As…, Data Format sqlite3) and serve that file with --app gnucash',
  },
  {
    root: /<(?:!DOCTYPE )?KMYMONEY-FILE[\s>]/,
    says: "a KMyMoney file in XML (KMyMoney's default format)",
    save: 'save it in KMyMoney as SQLite (File › Save As…, SQLite) and serve that file with --app kmymoney',
  },
];

/** For a file that is not SQLite: what it is, where it is a bookkeeping application's XML. */
function formatHint(file: string): string {
  // 4 KiB of compressed XML hold its root element; they inflate to at most about 4 MB.
  let head = readHeader(file, 4096);
  const gzipped = head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1];
  if (gzipped) {
    try {
      // The start of the stream only: a flush that does not require the stream's end.
      head = gunzipSync(head, { finishFlush: zlib.Z_SYNC_FLUSH, maxOutputLength: 8 * 1024 * 1024 });
    } catch {
      head = Buffer.alloc(0);
    }
  }
  const text = head.toString('utf8', 0, Math.min(head.length, 4096));
  const known = XML_FORMATS.find((format) => format.root.test(text));
  if (known !== undefined) return `: it is ${known.says}; ${known.save}`;
  if (!gzipped && !/^\uFEFF?\s*<\?xml/.test(text)) return '';
  return `: it is ${gzipped ? 'gzip-compressed' : 'XML'}, as GnuCash and KMyMoney save a book by default; save it as SQLite in the application (GnuCash: File › Save As…, Data Format sqlite3; KMyMoney: File › Save As…, SQLite) and serve that file`;
}

/** The first `size` bytes of `file`, or none when it cannot be read (readHead says why). */
export function readHeader(file: string, size = 100): Buffer {
  try {
    return readHead(file, size);
  } catch {
    return Buffer.alloc(0);
  }
}

/** The first `size` bytes of `file`; throws the open's error (on Windows, EPERM or EBUSY where POSIX has a mode). */
export function readHead(file: string, size = 100): Buffer {
  const header = Buffer.alloc(size);
  // Never waits: a FIFO put in the file's place opens at once, and reads nothing.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    return header.subarray(0, readSync(fd, header, 0, header.length, 0));
  } finally {
    closeSync(fd);
  }
}
