// The command's one error type and how it words an error, a file system error among them.
// A leaf: it imports nothing of bin/, so every module of the command can use it without an
// import cycle.

import { errorCode } from '../../lib/internal.js';

/** A problem the command ends with: one line for the user, and the exit code. */
export class CliError extends Error {
  /** 2 for a wrong command line, 1 for everything that goes wrong after it. */
  readonly exitCode: 1 | 2;

  constructor(message: string, exitCode: 1 | 2 = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** `Name: message` for an Error, the value as text otherwise; never a stack. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : textOf(error);
}

/** An Error's message, the value as text otherwise. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : textOf(error);
}

/** `value` as text, also one that has none (an object without a prototype throws in String()). */
function textOf(value: unknown): string {
  try {
    return String(value);
  } catch {
    return 'a value without text';
  }
}

/**
 * An error no code expected, for the one line it ends with: its words and the innermost
 * stack frame in a file, not in Node itself (` (at FILE:LINE:COLUMN)`), never the stack.
 */
export function describeBug(error: unknown): string {
  const stack = error instanceof Error ? (error.stack ?? '') : '';
  const frame = /^\s+at (?:.*\()?((?:file:\/\/|\/)[^()\s]+:\d+:\d+)\)?$/m.exec(stack);
  return `${describeError(error)}${frame === null ? '' : ` (at ${frame[1]})`}`;
}

/**
 * Whether `error` is macOS' privacy protection (TCC) refusing a read: EPERM, where a mode
 * that forbids it says EACCES. A service under launchd may not read Desktop, Documents,
 * Downloads, iCloud Drive or removable volumes without Full Disk Access, whatever the mode.
 */
export function isPrivacyRefusal(error: unknown, platform: NodeJS.Platform = process.platform): boolean {
  return platform === 'darwin' && errorCode(error) === 'EPERM';
}

/** A file system error in a few words: `no such file`, `permission denied`, … */
export function describeFsError(error: unknown, platform: NodeJS.Platform = process.platform): string {
  const code = errorCode(error);
  if (code === 'ENOENT') return 'no such file';
  if (isPrivacyRefusal(error, platform)) {
    return "not permitted by macOS' privacy protection (EPERM, not the file's mode): give the program that runs the service (under launchd, the node binary) Full Disk Access in System Settings › Privacy & Security, or keep the file outside Desktop, Documents, Downloads and iCloud Drive";
  }
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return messageOf(error);
}

/**
 * describeFsError; for a read this process was denied by a mode (not by macOS' privacy
 * protection, which says its own fix), also `why()`: who may not read what, and what to
 * change (the file rule's whyNotReadable).
 */
export function describeReadError(error: unknown, why: () => string): string {
  const code = errorCode(error);
  const denied = (code === 'EACCES' || code === 'EPERM') && !isPrivacyRefusal(error);
  return denied ? `${describeFsError(error)}: ${why()}` : describeFsError(error);
}
