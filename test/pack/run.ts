// The package as npm users get it: pack it, install the tarball into an empty folder,
// run the installed command with --demo and search it, and type-check a consumer. Then as
// an admin installs it (docs/operations.md, Install): the documented offline install, run
// as written with an empty npm cache, --offline and no registry in reach, and the systemd
// unit's ExecStart line run as systemd would, with an old Node first on PATH.
//
//   npm run test:pack

import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { asRoot, blocksAfter } from '../support/doc-snippets.js';
import { brokenLinks } from '../support/markdown-links.js';

const root = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'booking-pack-'));
const step = (text: string): void => void process.stdout.write(`pack: ${text}\n`);

try {
  // With node and sh but no npm on PATH, as on Windows, where npm is a .cmd file that only a shell starts:
  // the script starts npm as npm started it.
  step('npm run package, no npm on PATH');
  const npmCli = process.env.npm_execpath;
  assert.ok(npmCli, 'run through npm (npm run test:pack)');
  const nodeOnly = join(dir, 'node-only');
  mkdirSync(nodeOnly);
  symlinkSync(process.execPath, join(nodeOnly, 'node'));
  symlinkSync('/bin/sh', join(nodeOnly, 'sh'));
  execFileSync(process.execPath, [npmCli, 'run', '--silent', 'package', '--', '--pack-destination', dir], {
    cwd: root,
    env: { ...process.env, PATH: nodeOnly },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
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
    // docs/applications.md's worked example of another schema served through views.
    'package/fixtures/existing-app.sql',
    'package/fixtures/existing-app-views.sql',
    'package/openapi.json',
    'package/README.md',
    'package/LICENSE',
    'package/package.json',
  ]) {
    assert.ok(files.includes(expected), `the tarball holds ${expected}`);
  }
  for (const unwanted of ['test/', 'bench/', 'examples/', 'lib/', '.ci/']) {
    assert.ok(!files.some((file) => file.startsWith(`package/${unwanted}`)), `the tarball leaves out ${unwanted}`);
  }
  // The runtime dependencies, for an install without a registry, and nothing of the dev ones.
  const bundled = new Set(
    files.filter((file) => file.startsWith('package/node_modules/')).map((file) => file.split('/')[2]),
  );
  assert.deepEqual([...bundled].sort(), ['better-sqlite3', 'node-addon-api'], 'the bundled packages');
  assert.ok(
    files.includes('package/node_modules/better-sqlite3/prebuilds/linux-x64.node'),
    'with its prebuilt binaries',
  );
  step(`${files.length} files in ${tarball}`);

  // The documents an installed package holds link only to what it ships (docs/operations.md
  // names the install's own path to docs/): every relative link, and the heading it names.
  const unpacked = join(dir, 'unpacked');
  mkdirSync(unpacked);
  execFileSync('tar', ['-xzf', join(dir, tarball), '-C', unpacked]);
  const shipped = (path: string): string | undefined => {
    try {
      return readFileSync(join(unpacked, 'package', path), 'utf8');
    } catch {
      return undefined;
    }
  };
  const documents = files
    .map((file) => file.slice('package/'.length))
    .filter((file) => file.endsWith('.md') && !file.startsWith('node_modules/'));
  for (const expected of [
    'README.md',
    'docs/API.md',
    'docs/operations.md',
    'RELIABILITY.md',
    'BENCHMARKS.md',
    'CHANGELOG.md',
  ]) {
    assert.ok(documents.includes(expected), `the tarball holds ${expected}`);
  }
  const broken = documents.flatMap((file) => brokenLinks(file, shipped(file) ?? '', shipped));
  assert.deepEqual(broken, [], 'every link in the shipped documents resolves inside the tarball');
  step(`${documents.length} documents, every link resolves inside the tarball`);

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
  const manifest = JSON.parse(readFileSync(join(app, 'node_modules/booking-search-server/package.json'), 'utf8'));
  const rootOnly = ['scripts', 'devDependencies', 'allowScripts', 'overrides'].filter((key) => key in manifest);
  assert.deepEqual(rootOnly, [], "the published manifest holds nothing only a project's own root reads");

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
  await adminInstall(dir, join(dir, tarball));
  step('1 passed, 0 failed');
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * docs/operations.md's offline install, its lines as written (`sudo` left out, `/opt/` in
 * `dir`, the tarball where it lies), with an empty npm cache and an unreachable registry;
 * then the unit's ExecStart line with an old `node` first on PATH, as systemd runs it.
 */
async function adminInstall(dir: string, tarball: string): Promise<void> {
  const operations = readFileSync(join(root, 'docs/operations.md'), 'utf8');
  const install = blocksAfter(operations, '**3. Install it on the server**', 'sh')[0] ?? '';
  assert.ok(install.includes('npm install -g --offline'), install);
  // /opt and /usr/local/bin inside `dir`: the Node that runs this test as /opt/node.
  const opt = join(dir, 'opt');
  const bin = join(dir, 'bin');
  mkdirSync(opt);
  mkdirSync(bin);
  symlinkSync(dirname(dirname(process.execPath)), join(opt, 'node'));
  const script = asRoot(install, [
    ['/opt/', `${opt}/`],
    ['/usr/local/bin/', `${bin}/`],
  ]).replace(/\.\/booking-search-server-[\d.]+\.tgz/, tarball);
  const cache = join(dir, 'empty-cache');
  mkdirSync(cache);
  step(`the documented offline install, as written:\n${install.trimEnd()}`);
  const installed = spawnSync('sh', ['-ec', script], {
    cwd: dir,
    encoding: 'utf8',
    // Nothing to fetch from: an empty cache, and a registry nobody answers on.
    env: {
      ...process.env,
      PATH: `${bin}:${process.env['PATH']}`,
      npm_config_cache: cache,
      npm_config_registry: 'http://127.0.0.1:9/',
    },
  });
  assert.equal(installed.status, 0, `${installed.stdout}${installed.stderr}`);
  const warnings = installed.stderr
    .split('\n')
    .filter((line) => /install-scripts|allowScripts|EBADENGINE|gyp|ENOTCACHED/i.test(line));
  assert.deepEqual(warnings, [], 'the offline install prints no warning');
  assert.match(installed.stdout, /^1\.0\.0$/m, 'booking-search-server --version, through /usr/local/bin');

  // systemd's own PATH, with an old node first: the machine's own, if older than 22.14,
  // else a stand-in that fails as one would.
  const systemdPath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
  const oldBin = join(dir, 'old-node');
  mkdirSync(oldBin);
  const machines = spawnSync('sh', ['-c', 'command -v node && node --version'], {
    encoding: 'utf8',
    env: { PATH: systemdPath },
  }).stdout.split('\n');
  const [major = 0, minor = 0] = (machines[1] ?? '').replace(/^v/, '').split('.').map(Number);
  if (machines[0] && (major < 22 || (major === 22 && minor < 14))) {
    symlinkSync(machines[0], join(oldBin, 'node'));
    step(`the unit's ExecStart with the machine's Node ${machines[1]} (${machines[0]}) first on PATH`);
  } else {
    writeFileSync(join(oldBin, 'node'), '#!/bin/sh\necho "an old node on PATH ran the command" >&2\nexit 1\n');
    chmodSync(join(oldBin, 'node'), 0o755);
    step("the unit's ExecStart with a stand-in for an old Node first on PATH (this machine has none)");
  }

  const unit = readFileSync(join(root, 'deploy/booking-search-server.service'), 'utf8');
  const line = /^ExecStart=((?:.*\\\n)*.*)$/m.exec(unit)?.[1];
  assert.ok(line, 'the unit has an ExecStart line');
  const db = join(dir, 'kasse', 'kasse.sqlite');
  mkdirSync(dirname(db));
  const book = new Database(db);
  book.exec(
    readFileSync(join(root, 'fixtures/schema.sql'), 'utf8') + readFileSync(join(root, 'fixtures/bookings.sql'), 'utf8'),
  );
  book.close();
  const credentials = join(dir, 'credentials');
  mkdirSync(credentials, { mode: 0o700 });
  writeFileSync(join(credentials, 'credentials'), 'kasse:ge:heim\n', { mode: 0o600 });
  const run = join(dir, 'run');
  mkdirSync(run, { mode: 0o755 });
  const group = execFileSync('id', ['-gn'], { encoding: 'utf8' }).trim();
  // What systemd does with the line: continuation lines joined, ${CREDENTIALS_DIRECTORY}
  // expanded; the paths of this machine put in.
  const args = line
    .replace(/\\\n/g, ' ')
    .trim()
    .split(/\s+/)
    .map((arg) =>
      arg
        .replaceAll('/opt/', `${opt}/`)
        .replace('/srv/kasse/kasse.sqlite', db)
        .replace('/run/booking-search-server/', `${run}/`)
        // biome-ignore lint/suspicious/noTemplateCurlyInString: systemd's variable, not a template
        .replace('${CREDENTIALS_DIRECTORY}', credentials)
        .replace(/^www-data$/, group),
    );
  const service = spawn(args[0] as string, args.slice(1), {
    env: { PATH: `${oldBin}:${systemdPath}`, CREDENTIALS_DIRECTORY: credentials },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  service.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  service.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const started = Date.now();
  while (!out.includes(' listening on unix:')) {
    assert.ok(Date.now() - started < 15_000 && service.exitCode === null, `the unit's command did not start: ${out}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const status = await new Promise<number>((resolve, reject) => {
    request(
      {
        socketPath: join(run, 'api.sock'),
        path: '/kasse/api/v1/status',
        headers: { authorization: `Basic ${Buffer.from('kasse:ge:heim').toString('base64')}` },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    )
      .on('error', reject)
      .end();
  });
  assert.equal(status, 200, out);
  service.kill('SIGTERM');
  const code = await new Promise((resolve) => service.on('exit', resolve));
  assert.equal(code, 0, out);
  step("the unit's command ran on the Node it names, served and stopped cleanly");
}
