// `booking-search-server hash-password`: a password on standard input → its scrypt hash on
// standard output (docs/API.md, Credentials). On a terminal it asks twice without echo.

import { hashPassword } from '../../lib/internal.js';
import { CliError, NAME } from '../base/index.js';

// A password is one line; more than this on stdin is not a password.
const MAX_INPUT_BYTES = 64 * 1024;

export async function runHashPassword(stdin: NodeJS.ReadStream, stdout: NodeJS.WriteStream): Promise<void> {
  let password: string;
  if (stdin.isTTY) {
    password = await askWithoutEcho(stdin, 'Password: ');
    if (password === '') throw new CliError('the password is empty; nothing printed');
    const again = await askWithoutEcho(stdin, 'Repeat password: ');
    if (again !== password) throw new CliError('the two passwords differ; nothing printed');
  } else {
    password = firstLine(await readAll(stdin));
  }
  if (password === '') throw new CliError('the password is empty; give one line on standard input');
  // Hashed as given (the way to a password that has one), but a copy adds it far more often.
  if (password !== password.trim())
    process.stderr.write(
      `${NAME}: warning: the password begins or ends with a space or tab, hashed with it: a client must send it so\n`,
    );
  stdout.write(`${await hashPassword(password)}\n`);
}

/** The first line, without its newline (LF or CRLF). */
function firstLine(text: string): string {
  const end = text.indexOf('\n');
  const line = end === -1 ? text : text.slice(0, end);
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

async function readAll(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stdin) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    length += bytes.length;
    if (length > MAX_INPUT_BYTES) throw new CliError('standard input is too long for a password (64 KiB at most)');
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** One line typed on the terminal, not shown; Ctrl-C or Ctrl-D ends without a hash. */
function askWithoutEcho(stdin: NodeJS.ReadStream, prompt: string): Promise<string> {
  // Raw mode before the prompt: a password typed the moment the prompt shows is not echoed.
  stdin.setRawMode(true);
  process.stderr.write(prompt);
  stdin.resume();
  stdin.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let typed = '';
    const finish = (error: CliError | undefined): void => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (error === undefined) resolve(typed);
      else reject(error);
    };
    const onData = (chunk: string): void => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return finish(undefined);
        if (char === '\u0003' || char === '\u0004') return finish(new CliError('cancelled; nothing printed'));
        if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('');
        else typed += char;
      }
    };
    stdin.on('data', onData);
  });
}
