// The package as npm users get it: pack it, install the tarball into an empty folder,
// run the installed command with --demo and search it, and type-check a consumer.
//
//   npm run test:pack

import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'booking-pack-'));
const step = (text: string): void => void process.stdout.write(`pack: ${text}\n`);
const npm = (args: string[], cwd: string): string =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

try {
  step('npm run package');
  npm(['run', '--silent', 'package', '--', '--pack-destination', dir], root);
  const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'));
  assert.ok(tarball, 'npm pack wrote a tarball');
  const files = execFileSync('tar', ['-tzf', join(dir, tarball)], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .sort();
  for (const expected of [
    'package/bin/booking-search-server.js',
    'package/dist/lib/index.js',
    'package/dist/lib/index.d.ts',
    'package/dist/bin/cli.js',
    'package/fixtures/schema.sql',
    'package/openapi.json',
    'package/README.md',
    'package/LICENSE',
    'package/package.json',
  ]) {
    assert.ok(files.includes(expected), `the tarball holds ${expected}`);
  }
  for (const unwanted of ['test/', 'bench/', 'examples/', 'lib/', '.ci/', 'node_modules/']) {
    assert.ok(!files.some((file) => file.startsWith(`package/${unwanted}`)), `the tarball leaves out ${unwanted}`);
  }
  step(`${files.length} files in ${tarball}`);

  const app = join(dir, 'app');
  execFileSync('mkdir', [app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  step("npm install of the tarball into an empty folder, with npm's defaults");
  const installed = spawnSync(
    'npm',
    ['install', '--no-audit', '--no-fund', join(dir, tarball), '@types/better-sqlite3@^7.6.13', '@types/node@^22.19.0'],
    { cwd: app, encoding: 'utf8' },
  );
  assert.equal(installed.status, 0, installed.stderr);
  // npm 12 blocks a dependency's install scripts that the installing project has not
  // reviewed, and says so; the package must need none, on any supported Node.
  const warnings = installed.stderr
    .split('\n')
    .filter((line) => /install-scripts|allowScripts|EBADENGINE|gyp/i.test(line));
  assert.deepEqual(warnings, [], 'installing the tarball prints no install-script or engine warning');

  step('the installed command: --demo and a search');
  const env = { ...process.env };
  delete env['BOOKING_SEARCH_USER'];
  delete env['BOOKING_SEARCH_PASSWORD'];
  const child = spawn(join(app, 'node_modules/.bin/booking-search-server'), ['--demo', '--port', '0'], {
    cwd: app,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const started = Date.now();
  // Every line of the running command starts with an ISO time.
  const TRY = /^\S+ Try: curl -u demo:demo '([^']+)'$/m;
  while (!TRY.test(out)) {
    assert.ok(Date.now() - started < 15_000 && child.exitCode === null, `the demo did not start: ${out}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = TRY.exec(out)?.[1] as string;
  const body = await new Promise<string>((resolve, reject) => {
    request(url, { headers: { authorization: `Basic ${Buffer.from('demo:demo').toString('base64')}` } }, (res) => {
      let text = '';
      res
        .setEncoding('utf8')
        .on('data', (chunk: string) => (text += chunk))
        .on('end', () => resolve(text));
    })
      .on('error', reject)
      .end();
  });
  const result = JSON.parse(body) as { anzahl: number };
  assert.ok(result.anzahl > 0, body);
  child.kill('SIGTERM');
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 0);
  step(`the demo found ${result.anzahl} bookings and stopped cleanly`);

  step('a TypeScript consumer type-checks against the installed types');
  copyFileSync(new URL('consumer.ts', import.meta.url), join(app, 'consumer.ts'));
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        types: ['node'],
      },
      files: ['consumer.ts'],
    }),
  );
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(app, 'tsconfig.json')], {
    stdio: 'inherit',
  });
  step('1 passed, 0 failed');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
