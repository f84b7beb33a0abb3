// deploy/ for Windows and macOS: WinSW's service file (deploy/booking-search-server.xml) and
// launchd's property list (deploy/booking-search-server.plist), each read by a parser from
// Debian (python3's xml.etree and plistlib), with what each must say, and the plist's
// command line run as written here, with the paths of this machine put in. The WinSW
// command line runs under Wine in the Windows lane (test/windows/wine.test.ts).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SETTINGS } from '../bin/config/settings.js';
import { stopBoundMs } from '../bin/listen/server.js';
import { BIN, cleanEnv, type Launcher, start } from './support/cli-helpers.js';
import { basicAuth, buildDatabase, request, tempDir } from './support/helpers.js';

const PLIST = new URL('../deploy/booking-search-server.plist', import.meta.url).pathname;
const WINSW = new URL('../deploy/booking-search-server.xml', import.meta.url).pathname;
/** How long after the signal the service has ended at the latest, with the default --search-timeout. */
const BOUND_SECONDS = stopBoundMs(1000 * SETTINGS['search-timeout'].default) / 1000;

function python(script: string, file: string): unknown {
  return JSON.parse(execFileSync('python3', ['-c', script, file], { encoding: 'utf8' }));
}

interface LaunchdJob {
  Label: string;
  ProgramArguments: string[];
  UserName?: string;
  KeepAlive: { SuccessfulExit: boolean };
  ExitTimeOut: number;
  RunAtLoad: boolean;
}

const readPlist = (): LaunchdJob =>
  python('import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], "rb"))))', PLIST) as LaunchdJob;

test("launchd's plist, read by plistlib: the installed command with --config, a user of its own, restarted on failure, time to drain", () => {
  const job = readPlist();
  assert.equal(job.Label, 'booking-search-server');
  assert.deepEqual(job.ProgramArguments.slice(0, 3), [
    '/usr/local/bin/node',
    '/usr/local/lib/node_modules/booking-search-server/bin/booking-search-server.js',
    '--config',
  ]);
  assert.equal(job.UserName, '_booksearch');
  assert.equal(job.RunAtLoad, true);
  assert.deepEqual(job.KeepAlive, { SuccessfulExit: false });
  assert.ok(job.ExitTimeOut >= BOUND_SECONDS, 'launchd waits longer than the drain before SIGKILL');
});

test("launchd's command line, as written, serves a configuration's book", async (t) => {
  const [node, script, ...args] = readPlist().ProgramArguments;
  const dir = tempDir(t);
  const config = join(dir, 'office.conf');
  writeFileSync(config, `port = 0\n[book kasse]\nbase-path = /kasse\ndb = ${buildDatabase(t)}\n`, { mode: 0o600 });
  const asWritten = args.map((arg) => (arg === '/usr/local/etc/booking-search-server/office.conf' ? config : arg));
  assert.notDeepEqual(asWritten, args, 'the configuration file is the plist argument after --config');
  // The plist's node and script, at this machine's paths.
  const launch: Launcher = (extra) => [
    node === '/usr/local/bin/node' ? process.execPath : String(node),
    [script?.endsWith('/bin/booking-search-server.js') === true ? BIN : String(script), ...extra],
  ];
  const server = await start(
    t,
    asWritten,
    cleanEnv({ BOOKING_SEARCH_USER: 'kasse', BOOKING_SEARCH_PASSWORD: 'ge:heim' }),
    launch,
  );
  const status = await request(`${server.origin}/kasse/api/v1/status`, {
    headers: { authorization: basicAuth('kasse', 'ge:heim') },
  });
  assert.equal(status.status, 200, status.body);
});

interface WinswService {
  id: string;
  executable: string;
  arguments: string;
  stoptimeout: string;
  onfailure: string | null;
  stopexecutable: string | null;
  stopparentprocessfirst: string | null;
  user: string;
}

test("WinSW's service file, read by xml.etree: node.exe runs the installed command with --config, stopped by Ctrl+C with time to drain, restarted on failure", () => {
  const service = python(
    `import json, sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
t = lambda p: r.findtext(p)
f = r.find("onfailure")
print(json.dumps({"id": t("id"), "executable": t("executable"), "arguments": t("arguments"),
  "stoptimeout": t("stoptimeout"), "onfailure": None if f is None else f.get("action"),
  "stopexecutable": t("stopexecutable"), "stopparentprocessfirst": t("stopparentprocessfirst"), "user": t("serviceaccount/domain") + "\\\\" + t("serviceaccount/user")}))`,
    WINSW,
  ) as WinswService;
  assert.equal(service.id, 'booking-search-server');
  assert.equal(service.executable, 'C:\\Program Files\\nodejs\\node.exe');
  assert.equal(
    service.arguments,
    '"C:\\Program Files\\booking-search-server\\node_modules\\booking-search-server\\bin\\booking-search-server.js" --config "C:\\ProgramData\\booking-search-server\\office.conf"',
  );
  // Without a stop executable WinSW sends Ctrl+C, which the service drains on; it is signalled
  // before its child processes, which it ends itself.
  assert.equal(service.stopexecutable, null);
  assert.equal(service.stopparentprocessfirst, 'true');
  const stop = /^(\d+) sec$/.exec(service.stoptimeout);
  assert.ok(stop !== null && Number(stop[1]) >= BOUND_SECONDS, 'WinSW waits as long as the stop may take');
  assert.equal(service.onfailure, 'restart');
  assert.equal(service.user, 'NT AUTHORITY\\LocalService');
});

test("WinSW's service file tells the Windows admin the service's own stop bound and signal, and a reload PowerShell runs", () => {
  const manual = readFileSync(WINSW, 'utf8');
  const fixed = stopBoundMs(0) / 1000;
  assert.ok(
    manual.includes(`within ${fixed} s + search-timeout (${BOUND_SECONDS} s by default)`),
    'the bound of bin/listen/server.ts stopBoundMs',
  );
  assert.match(manual, /Ctrl\+C, which Node\.js takes as SIGINT \("stopping on SIGINT"/);
  assert.match(manual, /stoptimeout must be at least\s+that: raise it with search-timeout/);
  // PowerShell 5.1 has curl as a name of Invoke-WebRequest, which takes no -X.
  assert.match(manual, /^ {4}curl\.exe -X POST http:\/\/127\.0\.0\.1:9469\/-\/reload$/m);
  assert.doesNotMatch(manual, /^\s*curl /m);
});
