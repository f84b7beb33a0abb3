// The tarball users install: the built package with a manifest that has no scripts.
//
//   npm run package [-- --pack-destination DIR]
//
// A clone needs its `prepare` hook (npm install builds dist/ with it). In a tarball the
// same hook is an install script from a non-registry source, which npm 12 blocks and
// reports on every install; and it could not run there anyway (no TypeScript, no lib/).
// So the files are staged with the manifest minus scripts, dev dependencies, and
// allowScripts and overrides (which only a project's own root reads), and packed from there.
//
// The runtime dependencies go into the tarball too (bundleDependencies), as the clone's
// package-lock.json has them: better-sqlite3 with its prebuilt binaries, and what it
// depends on. So the tarball installs on a server that may not reach a registry, with an
// empty npm cache and --offline (docs/operations.md, Install).

import { type ExecFileSyncOptions, execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

interface Manifest {
  files: string[];
  dependencies: Record<string, string>;
  scripts?: unknown;
  devDependencies?: unknown;
  allowScripts?: unknown;
  overrides?: unknown;
}

interface Lock {
  packages: Record<string, { dev?: boolean; devOptional?: boolean; optional?: boolean }>;
}

const root = resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { 'pack-destination': { type: 'string', default: root } } });
const destination = resolve(values['pack-destination']);

// npm as `npm run package` started it (npm_execpath, its script run by this Node.js): on
// Windows `npm` is a .cmd file, which execFileSync does not start without a shell.
// Another package manager's (yarn, pnpm) takes other flags: then npm from PATH.
const npmCli = /npm-cli\.js$/.test(process.env.npm_execpath ?? '') ? process.env.npm_execpath : undefined;
const npm = (args: string[], options: ExecFileSyncOptions): string | Buffer =>
  npmCli === undefined
    ? execFileSync('npm', args, options)
    : execFileSync(process.execPath, [npmCli, ...args], options);

npm(['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;
const { scripts: _scripts, devDependencies: _dev, allowScripts: _allow, overrides: _overrides, ...kept } = manifest;
const published = { ...kept, bundleDependencies: Object.keys(manifest.dependencies) };
// Every package the installed tree needs at run time: the lock's entries that no dev
// dependency alone brought in.
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as Lock;
const runtime = Object.entries(lock.packages)
  .filter(([path, entry]) => path.startsWith('node_modules/') && entry.dev !== true && entry.devOptional !== true)
  .map(([path]) => path);

const stage = mkdtempSync(join(tmpdir(), 'booking-search-server-pack-'));
try {
  // npm adds README, LICENSE and package.json to `files` itself; they are staged too.
  for (const entry of [...manifest.files, 'README.md', 'LICENSE']) {
    cpSync(join(root, entry), join(stage, entry), { recursive: true });
  }
  for (const path of runtime) cpSync(join(root, path), join(stage, path), { recursive: true });
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
  const name = String(
    npm(['pack', '--silent', '--pack-destination', destination], { cwd: stage, encoding: 'utf8' }),
  ).trim();
  process.stdout.write(`${join(destination, name)}\n`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
