#!/usr/bin/env node
// The installed command. The code lives in TypeScript under bin/ and lib/, compiled to
// dist/ by `npm install` in a clone (the prepare script); the tarball ships it built.

// better-sqlite3's prebuilt binary needs Node-API 10 (Node 22.14 and newer, package.json's
// engines); on an older Node it crashes the process without a word, so this is checked
// before it is loaded.
// A copy without its package.json is not checked (the import below says what is missing).
const { readFileSync } = await import('node:fs');
let engines = { node: '0' };
try {
  ({ engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')));
} catch {}
const [least = 0, leastMinor = 0] = engines.node.replace(/^>=/, '').split('.').map(Number);
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < least || (major === least && minor < leastMinor)) {
  process.stderr.write(
    `booking-search-server: needs Node.js ${least}.${leastMinor} or newer (this is v${process.versions.node}); install Node.js 24 LTS\n`,
  );
  process.exit(1);
}

// A clone before `npm install` has no dist/: one line that says so, not Node's stack.
const { fileURLToPath } = await import('node:url');
const cli = new URL('../dist/bin/cli.js', import.meta.url);
// A SIGHUP (systemctl reload) while the code loads would end the service: kept for its
// reload. A module that cannot be loaded fails again below, in the command's own import.
await import(new URL('../dist/bin/base/signals.js', import.meta.url).href).then(
  (signals) => signals.holdReloads(),
  () => {},
);
let main;
try {
  ({ main } = await import(cli.href));
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(`'${fileURLToPath(cli)}'`)) throw error;
  process.stderr.write(
    'booking-search-server: the package is not built (dist/bin/cli.js is missing); run `npm install` in the clone, which builds it\n',
  );
  process.exit(1);
}
await main(process.argv.slice(2), process.env);
