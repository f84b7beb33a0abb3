// A reload with --workers: the primary asks every worker that serves to reload and says
// the outcome once, for the service — each worker's lines when all said the same, else one
// line naming what each did. A worker's side: it reloads when asked and answers with the
// lines it would have logged (bin/serve/serve.ts).

import { type Channel, isStopping, logLine, messageOf, type ReloadTrigger } from '../base/index.js';

/** A line a reload would log, and at which level. */
export interface SaidLine {
  text: string;
  /** `info`: what the service now serves, on stdout as at the start; the others on stderr. */
  level: 'info' | 'notice' | 'warning' | 'error';
}

const RELOAD = 'reload';

/**
 * How long the primary waits for a worker's reload after it last heard from it. A worker
 * stuck in one is ended by its last-resort thread (its channel then closes); this bounds the rest.
 */
const RELOAD_TIMEOUT_MS = 300_000;

/** In a worker: reloads when the primary asks, answering with the lines of that reload. */
export function answerReloads(channel: Channel, reload: (by: ReloadTrigger) => Promise<SaidLine[]>): void {
  channel.handle(RELOAD, (by) => reload(by === 'POST /-/reload' ? by : 'SIGHUP'));
}

/** What one worker said of a reload, or why it said nothing. */
export type WorkerReload = { pid: number; lines: SaidLine[] } | { pid: number; failed: string };

/** Why a worker that ended says nothing more: its channel's closing reason, which sayOnce knows. */
export const ended = (pid: number | undefined): string => `worker ${pid} ended`;

/**
 * In the primary: every worker in `workers` reloads as `by` asks; the outcome is logged once,
 * its lines starting with `cause`: what asked for it (by itself), or what the primary
 * reloads them for (`after worker 23963 started`: a replacement read the files).
 */
export async function reloadWorkers(
  workers: readonly { pid: number; channel: Channel }[],
  by: ReloadTrigger,
  cause: string = by,
): Promise<void> {
  // Workers that read different files (one was written while they read) reload once more,
  // so that they serve the same; each round is said.
  for (const round of [cause, `${cause} (again: the workers did not all read the same)`]) {
    const outcomes = await Promise.all(
      workers.map(({ pid, channel }) =>
        channel.request<SaidLine[]>(RELOAD, by, RELOAD_TIMEOUT_MS).then(
          (lines): WorkerReload => ({ pid, lines }),
          (error: unknown): WorkerReload => ({ pid, failed: messageOf(error) }),
        ),
      ),
    );
    if (isStopping()) return;
    logSaid(sayOnce(by, outcomes, round));
    if (groupsOf(by, outcomes).size <= 1) return;
  }
}

/** Logs a reload's lines. */
export function logSaid(lines: readonly SaidLine[]): void {
  for (const line of lines) logLine(line.text, line.level);
}

/**
 * The lines of one reload over several workers: theirs, when every worker said the same;
 * else one line that says what each group of workers did (an answer missing counts as
 * something else), at the gravest of their levels. Each starts with `cause` where the
 * workers' start with `by`.
 */
export function sayOnce(by: ReloadTrigger, all: readonly WorkerReload[], cause: string = by): SaidLine[] {
  const outcomes = answering(all);
  const first = outcomes[0];
  // No worker serves: the ones started for them read the files, and the primary says so.
  if (first === undefined) return [];
  const groups = groupsOf(by, outcomes);
  if (groups.size === 1 && 'lines' in first)
    return first.lines.map(({ text, level }) => ({
      text: text.startsWith(`${by}: `) ? `${cause}: ${unprefixed(by, text)}` : text,
      level,
    }));
  const said = [...groups].map(([what, pids]) => `worker${pids.length > 1 ? 's' : ''} ${pids.join(', ')}: ${what}`);
  const levels = outcomes.flatMap((outcome) =>
    'lines' in outcome ? outcome.lines.map((line) => line.level) : ['error'],
  );
  const level = levels.includes('error') ? 'error' : 'warning';
  const heading = groups.size === 1 ? '' : 'the workers did not all do the same: ';
  return [{ text: `${cause}: ${heading}${said.join(' | ')}`, level }];
}

/** A worker that ended meanwhile is not one that disagrees: its end is said, and its replacement reads the files. */
function answering(all: readonly WorkerReload[]): WorkerReload[] {
  return all.filter((outcome) => !('failed' in outcome && outcome.failed === ended(outcome.pid)));
}

/** The workers of `all` that answered, by what they said (or why they did not), as pids. */
function groupsOf(by: ReloadTrigger, all: readonly WorkerReload[]): Map<string, number[]> {
  const key = (outcome: WorkerReload): string =>
    'failed' in outcome
      ? `no answer (${outcome.failed})`
      : outcome.lines.map((line) => unprefixed(by, line.text)).join('; ');
  const groups = new Map<string, number[]>();
  for (const outcome of answering(all)) groups.set(key(outcome), [...(groups.get(key(outcome)) ?? []), outcome.pid]);
  return groups;
}

function unprefixed(by: ReloadTrigger, text: string): string {
  return text.startsWith(`${by}: `) ? text.slice(by.length + 2) : text;
}
