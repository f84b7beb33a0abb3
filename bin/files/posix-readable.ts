// Why this process may not read a book's file on a POSIX system, in words that name the
// user, the entry that stops it and what gives it access (the application's group); and
// how a line names a user or group.

import { execFileSync } from 'node:child_process';
import { accessSync, constants, type Stats, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { errorCode } from '../../lib/internal.js';
import { shellWord } from '../base/index.js';

/**
 * Why this process may not read `file` (it was denied), as the end of a line that names the
 * service's user, the first entry on the way it may not pass (a directory it may not enter,
 * or the file it may not read) with its owner, group and mode, and what gives the user
 * read access: the application's group (docs/operations.md, Users and permissions).
 */
export function whyNotReadable(file: string): string {
  const uid = process.geteuid?.() ?? 0;
  const user = nameOf('passwd', uid);
  const who = `this service's user ${user ?? ''}${user === undefined ? '' : ' '}(uid ${uid})`;
  const advice = 'docs/operations.md, Users and permissions';
  const culprit = firstDenied(file);
  if (culprit === undefined) {
    return `${who} may not read it; give that user read access through the application's group (${advice})`;
  }
  const { path, directory, stats } = culprit;
  const owner = nameOf('passwd', stats.uid);
  const group = nameOf('group', stats.gid);
  const mode = (stats.mode & 0o7777).toString(8).padStart(3, '0');
  const what = directory ? `may not enter directory ${path}` : 'may not read the file';
  const details = `owner ${owner ?? 'uid'} ${owner === undefined ? stats.uid : `(uid ${stats.uid})`}, group ${group ?? 'gid'} ${group === undefined ? stats.gid : `(gid ${stats.gid})`}, mode ${mode}`;
  const bits = directory ? 'rx' : 'r';
  const steps: string[] = [];
  if (stats.uid === uid) steps.push(`chmod u+${bits} ${shellWord(path)}`);
  else {
    const member = stats.gid === process.getegid?.() || (process.getgroups?.() ?? []).includes(stats.gid);
    if (!member) {
      steps.push(
        `add ${user ?? `uid ${uid}`} to group ${group ?? stats.gid} (${addToGroup(user ?? String(uid), group ?? String(stats.gid))}, then restart the service)`,
      );
    }
    if ((stats.mode & (directory ? 0o010 : 0o040)) === 0) steps.push(`chmod g+${bits} ${shellWord(path)}`);
  }
  const fix =
    steps.length > 0
      ? `give it read access through the application's group: ${steps.join(' and ')}`
      : "give it read access through the application's group";
  return `${who} ${what} (${details}); ${fix} (${advice})`;
}

/** The command that adds `user` to `group`: usermod on Linux, dseditgroup on macOS (which has no usermod). */
export function addToGroup(user: string, group: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'darwin'
    ? `sudo dseditgroup -o edit -a ${shellWord(user)} -t user ${shellWord(group)}`
    : `usermod -aG ${shellWord(group)} ${shellWord(user)}`;
}

/** The first directory on the way to `file` that this process may not enter, or the file when it may not read it. */
function firstDenied(file: string): { path: string; directory: boolean; stats: Stats } | undefined {
  const names = resolve(file)
    .split('/')
    .filter((name) => name !== '');
  let path = '';
  for (const [index, name] of names.entries()) {
    path = `${path}/${name}`;
    const last = index === names.length - 1;
    try {
      accessSync(path, last ? constants.R_OK : constants.X_OK);
    } catch (error: unknown) {
      const code = errorCode(error);
      if (code !== 'EACCES' && code !== 'EPERM') return undefined;
      try {
        // The parent was entered, so the entry itself can be looked at.
        return { path: last ? file : path, directory: !last, stats: statSync(path) };
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * Whom `check` judged the files as: this process's user and groups, and that a running
 * service keeps the groups it started with (a book added on SIGHUP whose file needs a new
 * group is refused until a restart, whatever `check` says); `undefined` where a process
 * has no groups (Windows).
 */
export function judgedAs(): string | undefined {
  const uid = process.geteuid?.();
  const groups = process.getgroups?.();
  if (uid === undefined || groups === undefined) return undefined;
  const all = [...new Set([process.getegid?.() ?? groups[0], ...groups])].filter((gid) => gid !== undefined);
  return `Judged as user ${named('passwd', uid)} with groups ${all.map((gid) => named('group', gid)).join(', ')}. A running service keeps the groups it started with: a file that needs another group is read after the group is in its SupplementaryGroups= (under systemd) and the service is restarted.`;
}

/** User or group `id` as a line names it: `bss6 (981)`, or `981` when it has no name. */
export function named(database: 'passwd' | 'group', id: number): string {
  const name = nameOf(database, id);
  return name === undefined ? `${id}` : `${name} (${id})`;
}

/**
 * The name of user or group `id` as the system's name service knows it (`getent`, so LDAP
 * and sssd count too), or `undefined`. Asked only to word a refusal.
 */
function nameOf(database: 'passwd' | 'group', id: number): string | undefined {
  try {
    const entry = execFileSync('getent', [database, String(id)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2_000,
    });
    const name = entry.split(':')[0];
    return name !== undefined && /^[A-Za-z0-9._-]{1,64}$/.test(name) ? name : undefined;
  } catch {
    return undefined;
  }
}
