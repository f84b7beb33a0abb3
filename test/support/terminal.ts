// A command run on a pseudo-terminal (python3's pty module), each answer typed at the next
// password prompt, as a person at a terminal answers: for the commands that ask for a
// password without echo. What the terminal showed is the standard output.

import { type SpawnSyncReturns, spawnSync } from 'node:child_process';

const PTY_DRIVER = `
import os, pty, sys, time
count = int(sys.argv[1])
command, answers = sys.argv[2:2 + count], sys.argv[2 + count:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(command[0], command)
out = b''
def read_prompts(count):
    global out
    end = time.time() + 60
    while out.count(b'assword: ') < count and time.time() < end:
        try:
            out += os.read(fd, 1024)
        except OSError:
            return
for number, answer in enumerate(answers, 1):
    read_prompts(number)
    os.write(fd, answer.encode() + b'\\r')
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode())
sys.exit(os.waitstatus_to_exitcode(status))
`;

/** `command` (its program and arguments) on a pseudo-terminal, typing `answers` at its prompts. */
export function onTerminal(
  command: readonly string[],
  answers: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeout: number },
): SpawnSyncReturns<string> {
  return spawnSync('python3', ['-c', PTY_DRIVER, String(command.length), ...command, ...answers], {
    ...options,
    encoding: 'utf8',
  });
}
