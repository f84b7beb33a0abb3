// Why this process may not read a book's file on a POSIX system, in words that name the
// user, the entry that stops it and what gives it access (the application's group); and
// how a line names a user or group.

import { execFileSync } from 'node:child_process';
import { accessSync, constants, type Stats, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { errorCode } from '../../lib/internal.js';
import { shellWord } from '../base/index.js';
import type { FileKind } from './file-rule.js';

/**
 * Why this process may not read `file` (it was denied), as the end of a line that names the
 * service's user, the first entry on the way it may not pass (a directory it may not enter,
 * or the file it may not read) with its owner, group and mode, and what gives the user
 * read access: for a book the application's group (docs/operations.md, Users and
 * permissions), for a secret root and the service's group (docs/operations.md, Credentials).
 */
export function whyNotReadable(file: string, kind: FileKind = 'book'): string {
  const uid = process.geteuid?.() ?? 0;
  const user = nameOf('passwd', uid);
  const who = `this service's user ${user ?? ''}${user === undefined ? '' : ' '}(uid ${uid})`;
  const advice = `docs/operations.md, ${kind === 'book' ? 'Users and permissions' : 'Credentials'}`;
  const culprit = firstDenied(file);
  if (culprit === undefined) {
    const group = kind === 'book' ? "the application's group" : "the service's group";
    return `${who} may not read it; give that user read access through ${group} (${advice})`;
  }
  const { path, directory, stats } = culprit;
  const mode = (stats.mode & 0o7777).toString(8).padStart(3, '0');
  const what = directory ? `may not enter directory ${path}` : 'may not read the file';
  const details = `owner ${labelled('passwd', stats.uid, 'uid')}, group ${labelled('group', stats.gid, 'gid')}, mode ${mode}`;
  const service = { uid, name: user ?? String(uid) };
  const fix = kind === 'book' ? remedy(culprit, file, service) : secretRemedy(culprit, file, service);
  return `${who} ${what} (${details}); ${fix} (${advice})`;
}

/**
 * What gives `service` access to the entry `culprit` names on the way to a file of its own
 * (its configuration, credentials, TLS key): the file root's and the service's group's,
 * 0640, in a directory the same, 0750, as docs/operations.md installs the credentials
 * file; never readable by every user, as a secret would be with o+r. A directory above
 * the file's own lets every user pass (as /etc does).
 */
function secretRemedy(culprit: Denied, file: string, service: { uid: number; name: string }): string {
  const { path, directory, stats } = culprit;
  if (stats.uid === service.uid) return `give it read access: chmod u+${directory ? 'rx' : 'r'} ${shellWord(path)}`;
  const closed = closedFolder(culprit);
  if (closed !== undefined) return `${closed}: move the file out of it`;
  if (directory && path !== dirname(resolve(file))) return `let every user pass it: chmod o+x ${shellWord(path)}`;
  const gid = process.getegid?.() ?? 0;
  const owners = `root:${nameOf('group', gid) ?? String(gid)}`;
  const mode = directory ? '0750' : '0640';
  return `give the ${directory ? 'directory' : 'file'} to root and the service's group, readable by no one else: chown ${shellWord(owners)} ${shellWord(path)}; chmod ${mode} ${shellWord(path)}`;
}

/**
 * A folder of root's that no file is served from, whoever reads it: root's home (a file copied
 * in with scp), or one closed to every user on purpose (mode 000: what systemd's ProtectHome=
 * puts over /home, or InaccessiblePaths=); `undefined` for any other.
 */
function closedFolder({ path, directory, stats }: Denied): string | undefined {
  if (!directory || stats.uid !== 0) return undefined;
  if (homeOf(0) === path) return "it is root's home folder";
  if ((stats.mode & 0o777) === 0)
    return "it is closed to every user (mode 000: under systemd, the unit's ProtectHome= or InaccessiblePaths= hides it so)";
  return undefined;
}

/** User or group `id` as a refusal names it: `kasse (uid 981)`, or `uid 981` when it has no name. */
export function labelled(database: 'passwd' | 'group', id: number, label: string): string {
  const name = nameOf(database, id);
  return name === undefined ? `${label} ${id}` : `${name} (${label} ${id})`;
}

/**
 * What gives `service` access to the entry `culprit` names. Through the application's
 * group as a rule; but an entry owned by root or in root's group has those only by accident
 * of who copied it there (a restore as root): never advise root's group, give it back to
 * the application instead, named by the directory that holds it where that directory is
 * not root's. A directory above the application's own lets every user pass (as /srv does).
 */
function remedy(culprit: Denied, file: string, service: { uid: number; name: string }): string {
  const { path, directory, stats } = culprit;
  const bits = directory ? 'rx' : 'r';
  if (stats.uid === service.uid)
    return `give it read access to its owner, this service's user: chmod u+${bits} ${shellWord(path)}`;
  const closed = closedFolder(culprit);
  if (closed !== undefined) return `${closed}: move the book out of it, into a folder of the application's user`;
  // A person's home folder stays closed to other users (systemd's ProtectHome= hides it): its owner serves the book.
  if (directory && stats.uid !== 0 && homeOf(stats.uid) === path) {
    const owner = nameOf('passwd', stats.uid) ?? `uid ${stats.uid}`;
    return `it is the home folder of ${owner}: serve the book as ${owner}, or move it out of the home folder`;
  }
  if (stats.uid === 0 || stats.gid === 0) {
    if (directory && path !== dirname(resolve(file))) return `let every user pass it: chmod o+x ${shellWord(path)}`;
    return giveBack(path, directory ? '0750' : '0640', service);
  }
  const shared = directory ? undefined : sharedGroup(path, stats);
  if (shared !== undefined) {
    const steps = [`chgrp ${shellWord(shared)} ${shellWord(path)}`];
    if ((stats.mode & 0o040) === 0) steps.push(`chmod g+r ${shellWord(path)}`);
    return `give it its folder's group ${shared}, which this service's user is in: ${steps.join(' and ')}`;
  }
  const steps: string[] = [];
  if (!isMember(stats.gid)) steps.push(joinGroup(service.name, nameOf('group', stats.gid) ?? String(stats.gid)));
  if ((stats.mode & (directory ? 0o010 : 0o040)) === 0) steps.push(`chmod g+${bits} ${shellWord(path)}`);
  const through = "give it read access through the application's group";
  return steps.length > 0 ? `${through}: ${steps.join(' and ')}` : through;
}

/**
 * The group of the folder holding `file`, when this process is in it and not in the file's:
 * a shared read group (docs/operations.md), whose set-group-ID bit reaches the files made in
 * the folder but not one an application saved elsewhere and renamed into it.
 */
function sharedGroup(file: string, stats: Stats): string | undefined {
  let folder: Stats;
  try {
    folder = statSync(dirname(file));
  } catch {
    return undefined;
  }
  if (folder.gid === stats.gid || folder.gid === 0 || !isMember(folder.gid) || isMember(stats.gid)) return undefined;
  return nameOf('group', folder.gid) ?? String(folder.gid);
}

/** The advice to give a book's file `file` back to the application's user and group (a restore as root left it root's). */
export function giveBackFile(file: string): string {
  const uid = process.geteuid?.() ?? 0;
  return giveBack(file, '0640', { uid, name: nameOf('passwd', uid) ?? String(uid) });
}

/** The advice to give `path` back to the application's user and group, named by the directory holding it where it tells. */
function giveBack(path: string, mode: string, service: { uid: number; name: string }): string {
  const what = `give the ${mode === '0750' ? 'directory' : 'file'} back to the application's user and group`;
  let holder: Stats | undefined;
  try {
    holder = statSync(dirname(path));
  } catch {
    holder = undefined;
  }
  const owner = holder === undefined || holder.uid === 0 ? undefined : nameOf('passwd', holder.uid);
  const group = holder === undefined || holder.gid === 0 ? undefined : nameOf('group', holder.gid);
  if (holder === undefined || owner === undefined || group === undefined) {
    return `${what}: chown it to them and chmod ${mode} ${shellWord(path)}`;
  }
  const steps = [`chown ${shellWord(`${owner}:${group}`)} ${shellWord(path)}`, `chmod ${mode} ${shellWord(path)}`];
  if (holder.uid !== service.uid && !isMember(holder.gid)) steps.push(joinGroup(service.name, group));
  // Joined as a shell joins commands, so that the line's end pastes as it reads.
  return `${what}: ${steps.join('; ')}`;
}

/** Whether this process is in group `gid` (its primary group or a supplementary one). */
function isMember(gid: number): boolean {
  return gid === process.getegid?.() || (process.getgroups?.() ?? []).includes(gid);
}

function joinGroup(user: string, group: string): string {
  return `add ${user} to group ${group} (${addToGroup(user, group)}, then restart the service)`;
}

/** The command that adds `user` to `group`: usermod on Linux, dseditgroup on macOS (which has no usermod). */
export function addToGroup(user: string, group: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'darwin'
    ? `sudo dseditgroup -o edit -a ${shellWord(user)} -t user ${shellWord(group)}`
    : `usermod -aG ${shellWord(group)} ${shellWord(user)}`;
}

interface Denied {
  path: string;
  directory: boolean;
  stats: Stats;
}

/** The first directory on the way to `file` that this process may not enter, or the file when it may not read it. */
function firstDenied(file: string): Denied | undefined {
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

/** The entries asked of the name service, each once a process: a look at a served file asks again every second. */
const entries = new Map<string, string[] | undefined>();

/**
 * The entry of user or group `id` as the system's name service knows it (`getent`, so LDAP
 * and sssd count too), its fields; `undefined`: none. Asked once a process for each id, that
 * answer kept: `getent` blocks the event loop, up to its 2 s when LDAP does not answer.
 */
function entryOf(database: 'passwd' | 'group', id: number): string[] | undefined {
  const key = `${database} ${id}`;
  if (!entries.has(key)) entries.set(key, askEntry(database, id));
  return entries.get(key);
}

function askEntry(database: 'passwd' | 'group', id: number): string[] | undefined {
  try {
    const entry = execFileSync('getent', [database, String(id)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2_000,
    });
    return entry.split('\n')[0]?.split(':');
  } catch {
    return undefined;
  }
}

/** The name of user or group `id` as the system's name service knows it, or `undefined`. */
export function nameOf(database: 'passwd' | 'group', id: number): string | undefined {
  const name = entryOf(database, id)?.[0];
  return name !== undefined && /^[A-Za-z0-9._-]{1,64}$/.test(name) ? name : undefined;
}

/** The home folder of user `uid`, a person who logs in (not a daemon's, nologin, whose home may be its data), or `undefined`. */
function homeOf(uid: number): string | undefined {
  const entry = entryOf('passwd', uid);
  return entry === undefined || /\/(?:nologin|false)$/.test(entry[6] ?? '') ? undefined : entry[5] || undefined;
}
