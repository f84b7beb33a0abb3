// What the running CLI writes: every line starts with an ISO 8601 time (UTC), or is one
// JSON object with a `time` and a `level` field (`--log-format json`). stdout carries the
// greeting and the access log, stderr warnings and errors. Never a query string, never a
// secret. Under systemd, each line also starts with its syslog priority (`<4>`), which
// journald reads and strips, so that `journalctl -p warning` shows the warnings. With
// --workers, a line a worker says itself names it (`worker PID: `), as the primary's lines
// about a worker do: the lines of two workers that met the same lock are told apart from
// one worker's two. An access line needs no name: one worker answered it.

import cluster from 'node:cluster';
import { fstatSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Answered } from '../../lib/internal.js';
import { describeError } from './errors.js';

export type LogFormat = 'text' | 'json';
/** How much a line matters, as syslog and journald rank it (RFC 5424 §6.2.1). */
export type LogLevel = 'error' | 'warning' | 'notice' | 'info';

let format: LogFormat = 'text';

/**
 * How the log names the socket of --socket and its clients: `unix`, as nginx's proxy_pass
 * writes a socket (`unix:PATH:URI`); `pipe` on Windows, where that socket is a named pipe.
 */
export const SOCKET_WORD = process.platform === 'win32' ? 'pipe' : 'unix';

// sd-daemon(3): a line written to journald's stream that starts with `<N>` has priority N.
const PRIORITY: Record<LogLevel, string> = { error: '<3>', warning: '<4>', notice: '<5>', info: '<6>' };

/**
 * Whether file descriptor `fd` is journald's stream: systemd names that stream's device
 * and inode in JOURNAL_STREAM (`DEV:INODE`, systemd.exec(5)), and a program is to check
 * its own stdout/stderr against it rather than trust the variable alone (the variable is
 * inherited by children whose output goes elsewhere).
 */
function isJournal(fd: number): boolean {
  const stream = /^(\d+):(\d+)$/.exec(process.env['JOURNAL_STREAM'] ?? '');
  if (stream === null) return false;
  try {
    const { dev, ino } = fstatSync(fd, { bigint: true });
    return String(dev) === stream[1] && String(ino) === stream[2];
  } catch {
    return false;
  }
}
const toJournal = { stdout: isJournal(1), stderr: isJournal(2) };
const speaker = cluster.isWorker ? `worker ${process.pid}: ` : '';

export function setLogFormat(chosen: LogFormat): void {
  format = chosen;
}

// One Date and one toISOString per millisecond, not per line: the access log stays cheap.
let cachedMs = -1;
let cachedTime = '';

export function isoTime(): string {
  const ms = Date.now();
  if (ms !== cachedMs) {
    cachedMs = ms;
    cachedTime = new Date(ms).toISOString();
  }
  return cachedTime;
}

// What a value that did not come from this program may not bring into a log line as it is:
// C0 controls (newlines among them), DEL and C1 controls, the line and paragraph
// separators, the bidirectional overrides and isolates that reorder what a terminal shows,
// the characters that show as nothing (a name with a zero-width space looks like one
// without), a lone surrogate, and the two characters the escapes and a quoted value are made of.
const UNSAFE_IN_LOG =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds, to escape them.
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff"\\]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '"': '\\"', '\\': '\\\\' };
/** The most characters (code points) of one value a log line shows, unless told otherwise. */
export const MAX_LOGGED_CHARACTERS = 100;
/**
 * The most characters of one whole line, whatever it holds: every line through `logLine`
 * and `logInfo` (`logText`), the command's one line of refusal, and every line `check`
 * prints, is passed through `logValue` (with `quotes: false`) as a last guard, so that a text
 * from the database file that reached a message unescaped (an SQLite error quoting a view's
 * name, a booking's id in an error) can neither start a line of its own nor send a terminal
 * control sequence.
 */
export const MAX_LINE_CHARACTERS = 8_192;

/**
 * `value` made fit for one log line, for every value that did not come from this program:
 * the username a client sent, a text read from the database file, a path. The result is
 * one line that reads back unambiguously and may be put in double quotes: control
 * characters (newlines among them), the line and paragraph separators, bidirectional
 * controls and lone surrogates are written as escapes (`\n`, `\t`, `\x1b`, `\u2028`), `"`
 * and `\` as `\"` and `\\`. Beyond `max` code points it is cut (never inside a character)
 * and ends with `…(+N)`, N the code points left out, so that a hostile value cannot make a
 * line of any length. Everything else, umlauts and emoji included, stays as it is.
 * `quotes: false` leaves `"` as it is: for a whole line this program wrote, whose quotes
 * are its own; and `\`, unless `backslashes` (a line `check` prints may hold a command to
 * paste, `'\''` in it). Each text is escaped once: escaped again, `\n` would read `\\n`.
 */
export function logValue(
  value: string,
  max = MAX_LOGGED_CHARACTERS,
  { quotes = true, backslashes = quotes }: { quotes?: boolean; backslashes?: boolean } = {},
): string {
  let shown = value;
  let left = 0;
  if (value.length > max) {
    const characters = Array.from(value);
    if (characters.length > max) {
      shown = characters.slice(0, max).join('');
      left = characters.length - max;
    }
  }
  const escaped = shown.replace(UNSAFE_IN_LOG, (character) => {
    if ((!quotes && character === '"') || (!backslashes && character === '\\')) return character;
    const short = SHORT_ESCAPES[character];
    if (short !== undefined) return short;
    const code = character.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
  return left === 0 ? escaped : `${escaped}…(+${left})`;
}

/**
 * The access log's user: accepted, or tried by a failed login, escaped; `-` for none. In a
 * text line it is one field: a name that is empty, holds a space or reads `-` is quoted.
 * The last one is kept, since most lines name the user of the line before.
 */
function userForLog(user: string | undefined, json: boolean): string {
  if (user === undefined) return '-';
  if (user === lastUser.name && json === lastUser.json) return lastUser.shown;
  const value = logValue(user);
  const shown = json || (value !== '' && value !== '-' && !value.includes(' ')) ? value : `"${value}"`;
  lastUser = { name: user, json, shown };
  return shown;
}
let lastUser = { name: '', json: false, shown: '""' };

/**
 * A whole line this program wrote, as the log and the command's refusal show it: its own
 * quotes kept, a backslash escaped (a path holding the four characters `\x0a` would read as
 * one holding a newline, and a line could be forged to look like two). But not on Windows:
 * there a backslash separates every path a line names, and no path may hold a control
 * character, so a path reads as the admin wrote it (`C:\ProgramData\…`, `\\.\pipe\…`).
 */
export function logText(text: string, platform: NodeJS.Platform = process.platform): string {
  return logValue(text, MAX_LINE_CHARACTERS, { quotes: false, backslashes: platform !== 'win32' });
}

function formatMessage(text: string, level: LogLevel, journal: boolean, time = isoTime()): string {
  const priority = journal ? PRIORITY[level] : '';
  const message = logText(speaker + text);
  return format === 'json'
    ? `${priority}${JSON.stringify({ time, level, message })}\n`
    : `${priority}${time} ${message}\n`;
}

/**
 * An error line for stderr as `logLine` would write it, with `{time}` where its time goes:
 * for a thread that must write it later without this module (bin/base/last-resort.ts).
 */
export function errorLineTemplate(text: string): string {
  return formatMessage(text, 'error', toJournal.stderr, '{time}');
}

/**
 * One line on stderr: an error (what failed, the start's refusal), by default; a warning
 * (what the admin should change, a state the service waits for); or a notice (a change
 * that went well: a file served again, credentials re-read). `info`: on stdout (logInfo).
 */
export function logLine(message: string, level: LogLevel = 'error'): void {
  if (level === 'info') return logInfo([message]);
  process.stderr.write(formatMessage(message, level, toJournal.stderr));
}

/**
 * Hears the cause of a 500, on either listener: one line with the request's method and path
 * (without its query) and the cause's message, without JavaScript's name for its class.
 */
export function logError(error: unknown, req: IncomingMessage, path: string): void {
  const cause = error instanceof Error && error.message !== '' ? error.message : describeError(error);
  logLine(`error in ${req.method} ${path}: ${cause}`);
}

/** Lines that tell the admin what the service does (the listening line first): stdout. */
export function logInfo(lines: readonly string[]): void {
  flushAccessLog(); // stdout keeps its order
  process.stdout.write(lines.map((line) => formatMessage(line, 'info', toJournal.stdout)).join(''));
}

// Access lines go out in batches: at most one write every FLUSH_INTERVAL_MS, at the end of
// the event-loop turn when the last write is older than that. Each write to a pipe wakes
// its reader, and under load that cost a sixth of the status endpoint's CPU time
// (docs/design/README.md, "The batched access log"); a line still appears within 10 ms, and at
// once on a quiet service.
const FLUSH_INTERVAL_MS = 10;
// Written at once beyond this, whatever the time: the buffer stays small.
const MAX_PENDING_CHARS = 64 * 1024;
let pendingAccess = '';
let flushScheduled = false;
let lastFlush = Number.NEGATIVE_INFINITY;

function writeAccessLine(line: string): void {
  pendingAccess += line;
  if (pendingAccess.length >= MAX_PENDING_CHARS) return flushAccessLog();
  if (flushScheduled) return;
  flushScheduled = true;
  const wait = lastFlush + FLUSH_INTERVAL_MS - performance.now();
  if (wait <= 0) setImmediate(scheduledFlush);
  // Not unref'd: a service that stops with lines waiting writes them before it exits.
  else setTimeout(scheduledFlush, wait);
}

function scheduledFlush(): void {
  flushScheduled = false;
  flushAccessLog();
}

function flushAccessLog(): void {
  if (pendingAccess === '') return;
  const lines = pendingAccess;
  pendingAccess = '';
  lastFlush = performance.now();
  process.stdout.write(lines);
}

// stdout to a pipe or a file is written synchronously on Linux, so nothing is lost here.
process.on('exit', flushAccessLog);

/**
 * One line per request on stdout, written when the response ends: time, client address
 * (after the proxy rule), user (accepted, or the one a failed login tried; `-` without
 * credentials, or when its address was refused before they were read), method, path without the query (cut as every value from outside: Node's
 * parser takes a target up to the 16 KiB of the headers), status (`aborted` / `null` when
 * the client left first), milliseconds, and an error's code (`database_unavailable`: the
 * status alone does not tell a locked file from a fault).
 */
export function accessLog(
  /** Hears every response when it ends, with its milliseconds (lib/metrics.ts counts them). */
  ended?: (req: IncomingMessage, res: ServerResponse, ms: number) => void,
  /** Hears every response when it closes: the books count their requests in flight (BookService.closed). */
  closed?: (res: ServerResponse) => void,
): Answered {
  // Every access line is information, whatever its status: a failure is its own line.
  const priority = toJournal.stdout ? PRIORITY.info : '';
  return (res, elapsed, facts, path, error) => {
    const req = res.req;
    ended?.(req, res, elapsed);
    // To a tenth, written from whole tenths: toFixed formats a double, which costs more.
    const tenths = Math.round(elapsed * 10);
    const ms = tenths / 10;
    // A request the handler never routed (refused before, or by the listener) has no facts.
    const address = facts === undefined ? '-' : facts.clientAddress === 'unix' ? SOCKET_WORD : facts.clientAddress;
    const user = userForLog(facts?.user ?? facts?.attempted, format === 'json');
    const finished = res.writableFinished;
    const shown = logValue(path, MAX_LOGGED_CHARACTERS, { quotes: false });
    const code = finished ? error : undefined;
    writeAccessLine(
      format === 'json'
        ? `${priority}${JSON.stringify({ time: isoTime(), level: 'info', address, user, method: req.method, path: shown, status: finished ? res.statusCode : null, error: code, ms })}\n`
        : `${priority}${isoTime()} ${address} ${user} ${req.method} ${shown} ${finished ? res.statusCode : 'aborted'} ${(tenths - (tenths % 10)) / 10}.${tenths % 10}ms${code === undefined ? '' : ` ${code}`}\n`,
    );
    // After its line: what waits for the last request (a stop) finds every line written.
    closed?.(res);
  };
}
