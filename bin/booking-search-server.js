#!/usr/bin/env node
// The installed command. The code lives in TypeScript under bin/ and lib/, compiled to
// dist/ by `npm install` in a clone (the prepare script); the tarball ships it built.

// better-sqlite3's prebuilt binary needs Node-API 10 (Node 22.14 and newer); on an older
// Node it crashes the process without a word, so this is checked before it is loaded.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 14)) {
  process.stderr.write(
    `booking-search-server: needs Node.js 22.14 or newer (this is v${process.versions.node}); install Node.js 24 LTS\n`,
  );
  process.exit(1);
}

const { main } = await import('../dist/bin/cli.js');
await main(process.argv.slice(2), process.env);
