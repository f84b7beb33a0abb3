// Debian's Prometheus and promtool (test/system-tools.sh installs them), as an admin runs
// them against the admin listener: a server that scrapes it, and the exposition linter.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { get, tempDir } from './helpers.js';

/** What `promtool check metrics` says about an exposition: its exit code and its output. */
export async function promtoolCheckMetrics(text: string): Promise<{ code: number | null; output: string }> {
  const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stdin.end(text);
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, output };
}

/** A port nobody listens on right now (Prometheus cannot listen on port 0 and say which it took). */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface RunningPrometheus {
  /** An instant query through the HTTP API: the samples of the vector it returns. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** The state of the scrape targets, as /api/v1/targets reports them. */
  targets(): Promise<{ health: string; lastError: string; scrapeUrl: string }[]>;
}

/**
 * Prometheus scraping `target` (host:port) every second, with its data in a temp dir,
 * listening on 127.0.0.1; stopped when the test ends.
 */
export async function startPrometheus(t: TestContext, target: string): Promise<RunningPrometheus> {
  const dir = tempDir(t);
  const config = join(dir, 'prometheus.yml');
  // The scrape config docs/operations.md shows, with a one-second interval for the test.
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: booking-search-server',
      '    static_configs:',
      `      - targets: ['${target}']`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const child = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  t.after(() => void child.kill('SIGKILL'));
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ready = await get(`${origin}/-/ready`).catch(() => undefined);
    if (ready?.status === 200) break;
    if (child.exitCode !== null || Date.now() > deadline) assert.fail(`Prometheus did not start: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const api = async <T>(path: string): Promise<T> => {
    const reply = await get(`${origin}${path}`);
    assert.equal(reply.status, 200, reply.body);
    const parsed = JSON.parse(reply.body) as { status: string; data: T };
    assert.equal(parsed.status, 'success', reply.body);
    return parsed.data;
  };
  return {
    query: async (promql) =>
      (
        await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
          `/api/v1/query?query=${encodeURIComponent(promql)}`,
        )
      ).result,
    targets: async () =>
      (await api<{ activeTargets: { health: string; lastError: string; scrapeUrl: string }[] }>('/api/v1/targets'))
        .activeTargets,
  };
}
