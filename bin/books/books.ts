// The books a service serves, as the admin listener and the logs see them: what each is now.

import type { DatabaseStatus } from './status.js';

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
