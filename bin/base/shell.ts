// The words of a command this program prints for the admin to paste (`sqlite3 FILE …`,
// `chmod g+r PATH`): a path with a space, a quote or a `$` must reach the command as one
// word, not create a stray file named after its first part. A leaf: it imports nothing.

// Characters that no POSIX shell treats specially anywhere in an argument.
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;
// A Windows path's characters that neither cmd nor PowerShell treats specially.
const PLAIN_WINDOWS = /^[A-Za-z0-9_+=:.\\/-]+$/;

/**
 * `word` as a POSIX shell reads it back as one argument: as it is when it holds only
 * characters no shell treats specially, else in single quotes, `'` written as `'\''`. On
 * Windows, for cmd and PowerShell alike, in double quotes (a Windows path holds none).
 */
export function shellWord(word: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return PLAIN_WINDOWS.test(word) ? word : `"${word}"`;
  if (PLAIN.test(word)) return word;
  return `'${word.replaceAll("'", "'\\''")}'`;
}
