// What the service says when it starts: where it listens, which application a file was
// recognised as, for the demo what to try; and the warnings about a setup that others on
// the machine could use (secrets every user can read, a socket or a proxy on loopback that
// every user can reach, passwords over plain HTTP, an admin listener without credentials off
// loopback, root serving another user's book).

import type { Server } from 'node:http';
import { resolveOptions } from '../../lib/internal.js';
import { logLine, NAME, SOCKET_WORD, shellWord } from '../base/index.js';
import type { DemoDatabase } from '../books/index.js';
import type { SaidLine } from '../cluster/index.js';
import { type BookConfig, nearestName, type ServeCommand } from '../config/index.js';
import {
  appSetting,
  type FileRule,
  fileRule,
  judgeDatabaseFile,
  letsEveryoneConnect,
  readableByEveryone,
} from '../files/index.js';
import { isLoopback } from '../listen/index.js';

/**
 * The start-up lines: where the API is served (each book's base path and file when the
 * books are a configuration file's sections), the admin listener's `adminLines`, and for
 * the demo what to try. `recognised`: the application each book's tables were recognised as.
 */
export function greeting(
  command: ServeCommand,
  server: Server,
  adminLines: readonly string[],
  demo: DemoDatabase | undefined,
  recognised: ReadonlyMap<string, string>,
): string[] {
  const file = command.config?.file;
  // What a book's line says of the application its tables were recognised as, if anything.
  const said = (book: BookConfig | undefined): string | undefined => {
    const app = book === undefined ? undefined : recognised.get(book.name);
    return book !== undefined && book.app === undefined && app !== undefined ? recognition(book, app) : undefined;
  };
  if (file === undefined || command.config?.books.length === 0) {
    const lines = oneBook(command, server, demo, said(command.books[0]));
    lines.splice(1, 0, ...adminLines);
    return lines;
  }
  const origin = listeningAt(command, server);
  const count = command.books.length;
  return [
    `${NAME} listening on ${origin}/ (${count} book${count === 1 ? '' : 's'} from ${file})`,
    ...adminLines,
    ...command.books.map((book) => bookLine(origin, book, said(book))),
  ];
}

/** A book's line at its start (and a reload's that adds it): where its API is, its file, `how` it was recognised. */
export function bookLine(origin: string, book: BookConfig, how?: string): string {
  return `book ${book.name}: ${origin}${book.basePath}/api/v1/ (${book.db}${how === undefined ? '' : `; ${how}`})`;
}

/** The start-up lines of --db or --demo; `recognition`: what the line says of the application recognised. */
function oneBook(
  command: ServeCommand,
  server: Server,
  demo: DemoDatabase | undefined,
  recognition: string | undefined,
): string[] {
  const base = `${command.settings.basePath.replace(/\/+$/, '')}/api/v1/`;
  const scheme = command.tls === undefined ? 'http' : 'https';
  const api = `${listeningAt(command, server)}${base}`;
  const lines = [`${NAME} listening on ${api}${recognition ? ` (${command.settings.db}: ${recognition})` : ''}`];
  if (demo === undefined) return lines;
  const target =
    command.socket === undefined ? api : { socket: command.socket.path, url: `${scheme}://localhost${base}` };
  const example = tryLine(command, target, demo.example);
  lines.push(
    `Demo: ${demo.count} sample cash bookings from ${demo.from} to ${demo.to}, in memory.`,
    command.credentialsFrom === 'demo default'
      ? 'Demo credentials: user "demo", password "demo" (set BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD for others).'
      : `Credentials: from the ${command.credentialsFrom}.`,
    ...(example === undefined ? [] : [example]),
  );
  return lines;
}

/**
 * The demo's example search as a line to paste into the shell of `platform`: sh, or on
 * Windows both cmd and PowerShell 5.1; `undefined` for a named pipe, which curl cannot reach.
 */
export function tryLine(
  command: Pick<ServeCommand, 'credentialsFrom' | 'credentials' | 'tls'>,
  target: string | { socket: string; url: string },
  { von, bis, betrag }: DemoDatabase['example'],
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const search = `buchungen?von=${von}&bis=${bis}&betrag=${betrag}`;
  const insecure = command.tls === undefined ? '' : '-k ';
  // A hash in the environment is no password to send: the user types theirs.
  const hashed = command.credentials.some((credential) => credential.passwordHash !== undefined);
  const fromEnvironment = command.credentialsFrom === 'environment';
  if (platform === 'win32') {
    if (typeof target !== 'string') return undefined;
    // Double quotes are one word to cmd and to PowerShell, & inside them too; PowerShell's curl
    // is Invoke-WebRequest, curl.exe is curl. The two write a variable differently, so it is named.
    const user = command.credentialsFrom === 'demo default' ? 'demo:demo' : 'USER:PASSWORD';
    const named = !fromEnvironment
      ? ''
      : hashed
        ? ' (USER: the value of BOOKING_SEARCH_USER; PASSWORD: its password)'
        : ' (USER and PASSWORD: the values of BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD)';
    return `Try: curl.exe ${insecure}-u ${user} "${target}${search}"${named}`;
  }
  const user =
    command.credentialsFrom === 'demo default'
      ? 'demo:demo'
      : !fromEnvironment
        ? 'USER:PASSWORD'
        : hashed
          ? '"$BOOKING_SEARCH_USER:PASSWORD"'
          : '"$BOOKING_SEARCH_USER:$BOOKING_SEARCH_PASSWORD"';
  const at = typeof target === 'string' ? `'${target}` : `--unix-socket ${shellWord(target.socket)} '${target.url}`;
  return `Try: curl ${insecure}-u ${user} ${at}${search}'`;
}

/**
 * What is said of `book`, given no app, when its file's tables are recognised as `app`'s: in
 * its line at the start, and in a line of its own when that comes later (a file waited for,
 * replaced, or a book a reload added); `before`: what they were recognised as before, if
 * anything. Nothing when that is unchanged, nor for the own schema, the default, unless an
 * application's came before. The app is named as it is written where the book is configured.
 */
export function recognition(book: BookConfig, app: string, before?: string): string | undefined {
  if (app === before) return undefined;
  // Served as the option app names it: the mapping it resolves to, an application's with its title.
  const { mapping } = resolveOptions({ app });
  if (mapping.kind !== 'own')
    return `recognised as ${mapping.title}'s file by its tables, served as with ${appSetting(book, mapping.name)}`;
  if (before === undefined || before === 'own') return undefined;
  const was = resolveOptions({ app: before }).mapping;
  return `no longer recognised as ${was.kind === 'own' ? before : was.title}'s file: served with the own schema`;
}

/** `http://127.0.0.1:8080`, or for a socket `unix:PATH:` as nginx's proxy_pass names one (`pipe:` on Windows). */
export function listeningAt(command: ServeCommand, server: Server): string {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : command.settings.port;
  const host = command.settings.host.includes(':') ? `[${command.settings.host}]` : command.settings.host;
  const scheme = command.tls === undefined ? 'http' : 'https';
  return command.socket === undefined ? `${scheme}://${host}:${port}` : `${SOCKET_WORD}:${command.socket.path}:`;
}

/**
 * The warning for a TZ that names no time zone Node.js knows (`Europe/Berln`): local times, a
 * GnuCash booking's day among them, are then UTC's, and nothing else says so.
 */
export function unknownTimeZone(tz: string | undefined): string | undefined {
  const name = tz?.replace(/^:/, '') ?? '';
  const known = Intl.DateTimeFormat().resolvedOptions().timeZone as string | undefined;
  if (known !== undefined || !/^[A-Za-z_]+(?:\/[A-Za-z0-9_+-]+)+$/.test(name)) return undefined;
  const nearest = nearestName(name, Intl.supportedValuesOf('timeZone'));
  const hint = nearest === undefined ? '' : `; did you mean ${nearest}?`;
  return `warning: TZ=${tz} names no time zone Node.js knows: local times, a GnuCash booking's day among them, are UTC's${hint}`;
}

/**
 * Said once at the start: a BOOKING_SEARCH_ variable that names no setting (a typo the
 * service would otherwise ignore), what the file rule leaves to the system (Windows'
 * NTFS permissions), and what others on this machine could use: secrets every user can
 * read, root serving another user's book, a trusted proxy on loopback, a socket every
 * user may connect to; and what others beyond it could read: passwords over plain HTTP.
 */
export function warnAboutSetup(command: ServeCommand, rule: FileRule = fileRule): void {
  for (const { variable, nearest } of command.strayVariables) {
    const hint = nearest === undefined ? '' : `; did you mean ${nearest}?`;
    logLine(`warning: the variable ${variable} names no setting and is ignored${hint}`, 'warning');
  }
  const zone = unknownTimeZone(process.env['TZ']);
  if (zone !== undefined) logLine(zone, 'warning');
  // Said, not warned: on Windows it is so for every setup that has files (--demo may have none).
  const files =
    command.config !== undefined ||
    command.credentialsFile !== undefined ||
    command.tls !== undefined ||
    command.books.some((book) => book.db !== undefined);
  if (rule.leftToTheSystem !== undefined && files) logLine(rule.leftToTheSystem, 'notice');
  warnAboutSecretFiles(command);
  for (const warning of command.bookWarnings ?? []) logLine(warning, 'warning');
  warnAboutBookFiles(command.books);
  warnAboutOpenBooks(command.books);
  warnAboutLoopbackProxy(command);
  warnAboutOpenAdminListener(command);
  warnAboutPlainHttp(command);
  if (command.socket !== undefined && letsEveryoneConnect(command.socket.mode)) {
    logLine(
      `warning: --socket-mode ${command.socket.mode.toString(8)} lets every user of this machine connect to the socket, and the socket's peer is trusted as the proxy (X-Forwarded-For): any of them can choose the address the throttle counts; use 660 with --socket-group`,
      'warning',
    );
  }
}

/**
 * What the owner rule leaves to a warning about a book's file (root serving another user's
 * book, restored as root…): for the books at the start, and for each a reload adds or serves
 * anew (bin/serve/reload.ts). A file replaced later is warned of by its open (bin/books/open-book.ts).
 */
export function warnAboutBookFiles(
  books: readonly BookConfig[],
  say: (text: string, level: SaidLine['level']) => void = logLine,
): void {
  for (const { db } of books) {
    const access = db === undefined ? undefined : judgeDatabaseFile(db);
    if (access?.kind === 'reader' && access.warning !== undefined) say(`warning: ${access.warning}`, 'warning');
  }
}

/**
 * A book of a configuration whose other books name their users, that names none: every user
 * of the credentials may search it (a section that lost its `users =` line). Said of each at
 * the start, and by a reload of each it makes so (bin/serve/reload.ts): `before`, every book
 * served before the reload.
 */
export function warnAboutOpenBooks(
  books: readonly BookConfig[],
  before: readonly BookConfig[] = [],
  say: (text: string, level: SaidLine['level']) => void = logLine,
): void {
  const said = new Set(openBooks(before));
  for (const name of openBooks(books)) {
    if (said.has(name)) continue;
    say(
      `warning: book ${name} names no users: every user of the credentials may search it, those of the other books too; give its section a users = line`,
      'warning',
    );
  }
}

/** The books of `books` that name no users, where another does. */
function openBooks(books: readonly BookConfig[]): string[] {
  if (books.every((book) => book.users === undefined)) return [];
  return books.filter((book) => book.users === undefined).map((book) => book.name);
}

/**
 * A credentials file or TLS key that every user of the machine can read is used, with a
 * warning: at the start and at each reload that reads it again (bin/serve/reload.ts).
 */
export function warnAboutSecretFiles(
  command: ServeCommand,
  say: (text: string, level: SaidLine['level']) => void = logLine,
): void {
  const secrets = [
    ['credentials file', command.credentialsFile],
    ['TLS key', command.tls?.key],
  ] as const;
  for (const [what, file] of secrets) {
    const mode = file === undefined ? undefined : readableByEveryone(file);
    if (mode !== undefined) {
      say(
        `warning: ${what} ${file} is readable by every user of this machine (mode ${mode.toString(8)}); chmod o-rwx it`,
        'warning',
      );
    }
  }
}

/**
 * A proxy trusted on loopback believes X-Forwarded-For from every local process, so every
 * local user can choose the client address the throttle counts (docs/API.md, Throttling).
 */
function warnAboutLoopbackProxy(command: ServeCommand): void {
  const loopback = command.trustProxy.filter((entry) => entry !== 'unix' && isLoopback(entry));
  if (loopback.length === 0) return;
  logLine(
    `warning: --trust-proxy ${loopback.join(',')} is on loopback: every user of this machine can connect from there and choose its X-Forwarded-For, so only the per-username and global failure budgets slow their guessing; prefer --socket with --socket-group`,
    'warning',
  );
}

/**
 * The admin listener asks for no credentials: off loopback, whoever can reach the address
 * sees the service's metrics and its books' states and files (docs/operations.md, Monitoring).
 */
function warnAboutOpenAdminListener(command: ServeCommand): void {
  const admin = command.admin;
  if (admin === undefined || !('host' in admin) || isLoopback(admin.host)) return;
  const host = admin.host.includes(':') ? `[${admin.host}]` : admin.host;
  logLine(
    `warning: the admin listener on ${host}:${admin.port} has no credentials: whoever can reach that address reads /live, /ready (each book's state and file) and /metrics; keep it on loopback or --admin-socket, or let a firewall choose who reaches it`,
    'warning',
  );
}

/** Basic credentials over plain HTTP beyond this machine cross the network readable. */
function warnAboutPlainHttp(command: ServeCommand): void {
  if (command.tls === undefined && command.socket === undefined && !isLoopback(command.settings.host)) {
    logLine(
      `warning: serving HTTP Basic authentication without TLS on ${command.settings.host}: passwords cross the network readable; use --tls-cert/--tls-key or a TLS proxy`,
      'warning',
    );
  }
}
