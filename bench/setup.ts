// The benchmark files, generated once into bench/data/ (git-ignored) and reused: the
// 20,000-row cash book of a small business and the 1,000,000-row stress file, each with
// and without ANALYZE. The large pair takes about 20 s to generate.

import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync } from 'node:fs';

// The service refuses a database whose directory its user could write (as root: by the
// mode bits), so bench/data is left 0555; it is opened up while files are generated.
if (existsSync('bench/data')) chmodSync('bench/data', 0o755);
for (const rows of [20_000, 1_000_000]) {
  for (const analyze of [false, true]) {
    if (existsSync(`bench/data/bookings-${rows}${analyze ? '-analyzed' : ''}.sqlite`)) continue;
    const args = ['--import', 'tsx', 'bench/generate.ts', '--rows', String(rows), ...(analyze ? ['--analyze'] : [])];
    const result = spawnSync('node', args, { stdio: 'inherit' });
    if (result.status !== 0) process.exit(result.status ?? 1);
  }
}
chmodSync('bench/data', 0o555);
