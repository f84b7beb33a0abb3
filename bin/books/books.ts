// The books a service serves, as the admin listener and the logs see them: what each is now.

import { randomBytes, randomUUID } from 'node:crypto';
import type { Credentials } from '../../lib/internal.js';
import { CliError } from '../base/index.js';
import { type BookConfig, inTermsOfBook } from '../config/index.js';
import type { DatabaseStatus, ServedDatabase } from './status.js';

/** What a served book is now: its file's state, and the mapping it is served with. */
export interface BookStatus extends DatabaseStatus {
  /** The mapping served (`own`, `mmex`, …), given or recognised; `undefined` until the file was read once. */
  readonly app: string | undefined;
}

/** A book being served, as the admin listener and the logs see it. */
export interface BookView {
  readonly name: string;
  readonly basePath: string;
  readonly db: string | undefined;
  status(): BookStatus;
}

/**
 * The state of a book that names users of which none is in the credentials: `unusable`,
 * whatever its file's, since no one can log in to it (orNobody, below);
 * `undefined` for any other.
 */
export function userless(config: BookConfig, users: readonly Credentials[]): Partial<DatabaseStatus> | undefined {
  if (config.users === undefined || users.length > 0) return undefined;
  const names = config.users.join(', ');
  return { state: 'unusable', reason: `none of its users (${names}) is in the credentials: no one can log in to it` };
}

/** A book as its first look sees it: its configuration, its users, its file. */
export type FirstLook = { config: BookConfig; users: readonly Credentials[]; database: ServedDatabase };

/**
 * The first look at each of `books`' files (bin/books/database.ts, ready); all closed when one
 * cannot be served, its reason placed at its `db` line (`office.conf:12: …`) and said after the
 * others' lines. At the `start`, also when no book can be served: none with a user in the
 * credentials, and (of `several`, whose looks go on) every file one a start's look ends for.
 */
export async function firstLooks(books: readonly FirstLook[], start?: { several: boolean }): Promise<void> {
  const looks = await Promise.allSettled(
    books.map(({ config, database }) =>
      database.ready.catch((error: unknown) => {
        if (!(error instanceof CliError)) throw error;
        throw new CliError(inTermsOfBook(config, error.message), error.exitCode);
      }),
    ),
  );
  const failed = looks.find((look) => look.status === 'rejected');
  const ends = (look: (typeof looks)[number]): boolean =>
    start?.several === true && look.status === 'fulfilled' && look.value;
  const none =
    start !== undefined &&
    books.length > 0 &&
    books.every(({ config, users }, i) => userless(config, users) || ends(looks[i] as (typeof looks)[number]));
  if (failed === undefined && !none) return;
  for (const book of books) book.database.close();
  throw failed?.reason ?? new CliError('no book of the configuration can be served: the lines above say why');
}

/**
 * `users`, or for a book none of whose users is in the credentials (a warning and /ready say
 * so) a user no client can name, so that every login to it is refused as a wrong one.
 */
export function orNobody(users: readonly Credentials[]): readonly Credentials[] {
  return users.length > 0 ? users : NOBODY;
}

const NOBODY: readonly Credentials[] = [{ username: randomUUID(), password: randomBytes(32).toString('base64url') }];
