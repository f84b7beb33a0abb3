// The file rule of the platform this process runs on (file-rule.ts), and its parts as the
// other rooms call them. Tests take a rule of their own (posixRule, or windowsRule over an
// injected path module and stat) to judge another platform's paths on this one.

import type { DatabaseAccess, FileKind, FileRule, Trusted } from './file-rule.js';
import { posixRule } from './posix-rule.js';
import { windowsRule } from './windows-rule.js';

/** The rule for `platform` (process.platform's words). */
export function ruleFor(platform: NodeJS.Platform): FileRule {
  return platform === 'win32' ? windowsRule() : posixRule;
}

/** This process's rule. */
export const fileRule: FileRule = ruleFor(process.platform);

export const ensureOnlyOwnerCanChange = (what: string, path: string): void =>
  fileRule.ensureOnlyOwnerCanChange(what, path);
export const ensureDirectoriesSafe = (what: string, dir: string, which: string, advice: string): string =>
  fileRule.ensureDirectoriesSafe(what, dir, which, advice);
export const judgeDatabaseFile = (file: string, application?: Trusted): DatabaseAccess =>
  fileRule.judgeDatabaseFile(file, application);
export const letsEveryoneConnect = (mode: number): boolean => fileRule.letsEveryoneConnect(mode);
export const readableByEveryone = (path: string): number | undefined => fileRule.readableByEveryone(path);
export const whyNotReadable = (file: string, kind?: FileKind): string => fileRule.whyNotReadable(file, kind);
