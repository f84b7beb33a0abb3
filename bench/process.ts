// Starting and stopping the servers the benchmarks measure, each pinned to a core where
// taskset exists, so that the load generator has the other core to itself.

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const pinned = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/** `command` run on `core` (taskset), or as it is where taskset is missing. */
export const onCore = (core: string, command: string[]): string[] =>
  pinned ? ['taskset', '-c', core, ...command] : command;

/** The service from the checkout at `root` serving `file` on a free port, with the login throttle off. */
export const serviceCommand = (file: string, root = '.'): string[] => [
  'node',
  join(root, 'bin/booking-search-server.js'),
  '--db',
  file,
  '--port',
  '0',
  '--max-auth-failures',
  '0',
];

export interface Running {
  child: ChildProcess;
  origin: string;
  /** From spawn to the listening line. */
  startMs: number;
}

/** Spawns a server and waits for its `listening on http://…/` line. */
export function startServer(command: string[], env: NodeJS.ProcessEnv, core?: string): Promise<Running> {
  const full = core === undefined ? command : onCore(core, command);
  const started = process.hrtime.bigint();
  const child = spawn(full[0] as string, full.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const match = /listening on (http:\/\/[\d.:]+)\//.exec(output);
      if (match) {
        const startMs = Number(process.hrtime.bigint() - started) / 1e6;
        // The access log goes on into this pipe, read and dropped, as a log collector reads it.
        child.stdout?.removeAllListeners('data').resume();
        resolve({ child, origin: match[1] as string, startMs });
      }
    });
    child.on('exit', (code) => reject(new Error(`${command.join(' ')} exited with ${code}: ${output}`)));
  });
}

export async function stopServer({ child }: Running): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
