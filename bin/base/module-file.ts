// Where the code of another process or thread lives: a module beside the caller's, as
// dist/bin/…/NAME.js, or bin/…/NAME.ts where the sources run through tsx (whose loader a
// child process or a worker thread inherits with process.execArgv).

import { fileURLToPath } from 'node:url';

/** The file of module `name` (without extension) in the folder of `callerUrl` (`import.meta.url`). */
export function moduleBeside(callerUrl: string, name: string): string {
  const extension = callerUrl.endsWith('.ts') ? '.ts' : '.js';
  return fileURLToPath(new URL(`./${name}${extension}`, callerUrl));
}
