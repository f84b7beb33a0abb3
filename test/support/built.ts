// Imported by every test that runs what dist/ holds (the command, the examples, the walk of a
// search): against a build older than lib/ or bin/, such a test would pass or fail for code
// that is no longer there, so it refuses to run.

import { readdirSync, statSync } from 'node:fs';

const ROOT = new URL('../../', import.meta.url);
const built = statSync(new URL('dist/bin/cli.js', ROOT), { throwIfNoEntry: false })?.mtimeMs ?? 0;
for (const dir of ['lib', 'bin']) {
  for (const name of readdirSync(new URL(dir, ROOT), { recursive: true, encoding: 'utf8' })) {
    const file = new URL(`${dir}/${name}`, ROOT);
    if (name.endsWith('.ts') && statSync(file).mtimeMs > built)
      throw new Error(
        `dist/ is older than ${dir}/${name} (or missing): run \`npm run build\` first: this test runs the build`,
      );
  }
}
