// The registry of mappings: what `--app NAME` and `options.app` take, and what `check`
// recognises a file by. To add an application: CONTRIBUTING.md, "Where to change what".

import type { ApplicationMapping } from '../mapping.js';
import { actual } from './actual.js';
import { gnucash } from './gnucash.js';
import { kmymoney } from './kmymoney.js';
import { mmex } from './mmex.js';

export const APPLICATIONS: readonly ApplicationMapping[] = [actual, mmex, gnucash, kmymoney];

/** The names `--app` takes: the applications and `own` (the project's own schema, the default). */
export const APP_NAMES: readonly string[] = ['own', ...APPLICATIONS.map((app) => app.name)];

export function findApplication(name: string): ApplicationMapping | undefined {
  return APPLICATIONS.find((app) => app.name === name);
}
