// The reload's signal (bin/base/signals.ts) in a process of its own: Node ends a process on a
// SIGHUP nothing listens for, so one that comes during the start must be kept for the reload;
// on Windows, where it means the console window closes, it stops the service.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

const SIGNALS = new URL('../../bin/base/signals.ts', import.meta.url).href;

/** Runs `body` in a process of its own after holdReloads(); `heard` collects the reloads; prints it at its end. */
async function reloadsHeard(body: string): Promise<unknown> {
  const script = `
    import { holdReloads, onReloadSignal } from ${JSON.stringify(SIGNALS)};
    holdReloads();
    const heard = [];
    ${body}
  `;
  const args = ['--import', 'tsx', '--input-type=module', '-e', script];
  return JSON.parse((await promisify(execFile)(process.execPath, args)).stdout);
}

test('a SIGHUP after holdReloads and before onReloadSignal is answered once by the reload, not the end of the process', async () => {
  const heard = await reloadsHeard(`
    process.kill(process.pid, 'SIGHUP');
    process.kill(process.pid, 'SIGHUP');
    setTimeout(() => {
      onReloadSignal((by) => heard.push(by));
      setTimeout(() => {
        process.kill(process.pid, 'SIGHUP');
        setTimeout(() => console.log(JSON.stringify(heard)), 50);
      }, 50);
    }, 50);
  `);
  assert.deepEqual(heard, ['SIGHUP', 'SIGHUP'], 'the two kept as one, then the next one');
});

test('a SIGHUP not yet handed to a listener when onReloadSignal takes over is heard by the reload, not lost', async () => {
  const heard = await reloadsHeard(`
    process.kill(process.pid, 'SIGHUP');
    // In the same turn, before the signal reaches JavaScript: the keeper goes, the reload comes.
    onReloadSignal((by) => heard.push(by));
    setTimeout(() => console.log(JSON.stringify(heard)), 100);
  `);
  assert.deepEqual(heard, ['SIGHUP']);
});

test('on Windows a SIGHUP, sent as the console window closes, stops the service; POST /-/reload still reloads it', async () => {
  const script = `
    Object.defineProperty(process, 'platform', { value: 'win32' });
    const { onReloadSignal, onStopSignals, reloadAsSignalled } = await import(${JSON.stringify(SIGNALS)});
    const heard = [];
    onReloadSignal((by) => heard.push('reload: ' + by));
    onStopSignals((again, signal) => heard.push('stop: ' + signal));
    reloadAsSignalled();
    process.kill(process.pid, 'SIGHUP');
    setTimeout(() => console.log(JSON.stringify(heard)), 100);
  `;
  const args = ['--import', 'tsx', '--input-type=module', '-e', script];
  const heard = JSON.parse((await promisify(execFile)(process.execPath, args)).stdout);
  assert.deepEqual(heard, ['reload: POST /-/reload', 'stop: SIGHUP']);
});
