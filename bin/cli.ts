// The launcher: argv, the environment and the configuration file they name → one command,
// handed to the module that runs it (a registry of commands, as caddy's commands.go).
// Serving is bin/serve/serve.ts. Every failure ends in one line on stderr (a worker's goes to its
// primary, which says it once) and a non-zero exit code.

import cluster from 'node:cluster';
import {
  CliError,
  describeBug,
  holdReloads,
  logInfo,
  logLine,
  logText,
  messageOf,
  NAME,
  readPackageFile,
  readVersion,
} from './base/index.js';
import { commandOfPrimary, primaryChannel, reportFailure, shareStaleLogs } from './cluster/index.js';
import { checkOneFile, reportOnBooks, runHashPassword } from './commands/index.js';
import {
  asksForTheService,
  CONFIG_KEYS,
  type Command,
  configPath,
  parseCommandLine,
  type Reread,
  type RunningCredentials,
  readConfigFile,
  type ServeCommand,
  USAGE,
} from './config/index.js';
import { runServe } from './serve/index.js';

/** How a command runs; a number it gives is the exit code. `reread` reads the serving command again (SIGHUP). */
type Run<C extends Command> = (command: C, reread: Reread) => Promise<unknown> | undefined;

/** Every command, by name. */
const COMMANDS: { [Name in Command['command']]: Run<Extract<Command, { command: Name }>> } = {
  help: () => void process.stdout.write(USAGE),
  version: () => void process.stdout.write(`${readVersion()}\n`),
  openapi: () => void process.stdout.write(readPackageFile('openapi.json')),
  'hash-password': () => runHashPassword(process.stdin, process.stdout),
  check: (command) => checkOneFile(command.db, command, command.searchMs),
  'check-config': (command) => reportOnBooks(command.serve, command.credentialsProblem),
  serve: runServe,
};

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  runsTheService = asksForTheService(argv);
  // A command that serves nothing ends on a SIGHUP again (a closed terminal).
  holdReloads(!runsTheService);
  process.stdout.on('error', (error: unknown) => outputFailed('stdout', error));
  process.stderr.on('error', (error: unknown) => outputFailed('stderr', error));
  try {
    const reread: Reread = (credentials) => readServeCommand(argv, env, credentials);
    // A worker started in place of another serves its primary's command, not argv's now.
    const running = await commandOfPrimary();
    if (cluster.isWorker) await shareStaleLogs(primaryChannel());
    if (running !== undefined) return await runServe(running, reread, true);
    const command = readCommand(argv, env);
    const run = COMMANDS[command.command] as Run<Command>;
    const exitCode = await run(command, reread);
    if (typeof exitCode === 'number') process.exitCode = exitCode;
  } catch (error: unknown) {
    const message = error instanceof CliError ? error.message : `unexpected error: ${describeBug(error)}`;
    if (cluster.isWorker) return reportFailure(message);
    // A wrong command line and a command's refusal (check, hash-password: a bad line of the
    // file check reads too) answer the person typing it; the service's refusal is a log line.
    const plain = (error instanceof CliError && error.exitCode === 2) || !runsTheService;
    if (plain) process.stderr.write(`${logText(`${NAME}: ${message}`)}\n`);
    else logLine(`${NAME}: ${message}`);
    process.exitCode = error instanceof CliError ? error.exitCode : 1;
  }
}

/**
 * A reader of stdout or stderr that has gone (`check … | head`, a log pipe that ended) or a
 * log's disk that is full is no failure of the command: a one-off command's output ends
 * there; the service goes on serving and says once, on the other stream while it can be
 * written, what it no longer writes. Unheard, the error would end the process, and with it
 * every request it was answering, without a word.
 */
function outputFailed(stream: 'stdout' | 'stderr', error: unknown): void {
  if (gone.has(stream)) return;
  gone.add(stream);
  const why = messageOf(error);
  if (!runsTheService) return;
  if (stream === 'stdout' && !gone.has('stderr'))
    logLine(`warning: stdout cannot be written (${why}): the access log is no longer written`, 'warning');
  if (stream === 'stderr' && !gone.has('stdout'))
    logInfo([`warning: stderr cannot be written (${why}): warnings and errors are no longer written`]);
}
const gone = new Set<'stdout' | 'stderr'>();
let runsTheService = false;

/** argv, the environment and the configuration file they name → the command; `credentials`: the credentials file to read, whatever that file names (Reread). */
function readCommand(argv: readonly string[], env: NodeJS.ProcessEnv, credentials?: RunningCredentials): Command {
  return parseCommandLine(
    argv,
    env,
    (flag) => {
      const file = configPath(flag, env);
      return file === undefined ? undefined : readConfigFile(file, CONFIG_KEYS);
    },
    credentials,
  );
}

/** The serving command again, as SIGHUP reads it: the configuration file as it is now (Reread). */
function readServeCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  credentials?: RunningCredentials,
): ServeCommand {
  const command = readCommand(argv, env, credentials);
  if (command.command !== 'serve') throw new CliError(`the command line no longer serves (${command.command})`);
  return command;
}
