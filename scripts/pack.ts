// The tarball users install: the built package with a manifest that has no scripts.
//
//   npm run package [-- --pack-destination DIR]
//
// A clone needs its `prepare` hook (npm install builds dist/ with it). In a tarball the
// same hook is an install script from a non-registry source, which npm 12 blocks and
// reports on every install; and it could not run there anyway (no TypeScript, no lib/).
// So the files are staged with the manifest minus scripts, dev dependencies and
// allowScripts (which only a project's own root reads), and packed from there.

import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

interface Manifest {
  files: string[];
  scripts?: unknown;
  devDependencies?: unknown;
  allowScripts?: unknown;
}

const root = resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { 'pack-destination': { type: 'string', default: root } } });
const destination = resolve(values['pack-destination']);

execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;
const { scripts: _scripts, devDependencies: _dev, allowScripts: _allow, ...published } = manifest;

const stage = mkdtempSync(join(tmpdir(), 'booking-search-server-pack-'));
try {
  // npm adds README, LICENSE and package.json to `files` itself; they are staged too.
  for (const entry of [...manifest.files, 'README.md', 'LICENSE']) {
    cpSync(join(root, entry), join(stage, entry), { recursive: true });
  }
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', destination], {
    cwd: stage,
    encoding: 'utf8',
  }).trim();
  process.stdout.write(`${join(destination, name)}\n`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
