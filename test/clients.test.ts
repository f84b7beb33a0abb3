// Clients nobody here wrote, against the real CLI: Python's standard library and curl.
// urllib's HTTPBasicAuthHandler and `curl --anyauth` send every request first without
// credentials and answer the 401 challenge; none of that may count as a failed login
// (docs/API.md, Throttling). Each client makes more requests than the throttle allows
// failures, and every one of them must end in 200.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { cleanEnv, start } from './support/cli-helpers.js';
import { buildDatabase } from './support/helpers.js';

const run = promisify(execFile);
// Non-ASCII on purpose: RFC 7617 §2.1, charset="UTF-8".
const USER = 'Kassenprüferin';
const PASSWORD = 'Grüße:€-ß';
const REQUESTS = 25; // more than the 10 failures --max-auth-failures allows by default
const SEARCH = 'buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35';

const URLLIB_HANDLER = `
import json, sys, urllib.request, urllib.error
url, user, password, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
manager = urllib.request.HTTPPasswordMgrWithDefaultRealm()
manager.add_password(None, url, user, password)
opener = urllib.request.build_opener(urllib.request.HTTPBasicAuthHandler(manager))
statuses = []
for _ in range(count):
    try:
        with opener.open(url, timeout=10) as response:
            statuses.append([response.status, json.load(response)["anzahl"]])
    except urllib.error.HTTPError as error:
        statuses.append([error.code, error.read().decode("utf-8")])
print(json.dumps(statuses))
`;

const MANUAL_HEADER = `
import base64, json, sys, urllib.request, urllib.error
url, user, password, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
token = base64.b64encode(f"{user}:{password}".encode("utf-8")).decode("ascii")
statuses = []
for _ in range(count):
    request = urllib.request.Request(url, headers={"Authorization": f"Basic {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            statuses.append([response.status, json.load(response)["anzahl"]])
    except urllib.error.HTTPError as error:
        statuses.append([error.code, error.read().decode("utf-8")])
print(json.dumps(statuses))
`;

async function serveForClients(t: test.TestContext) {
  return start(
    t,
    ['--db', buildDatabase(t)],
    cleanEnv({ BOOKING_SEARCH_USER: USER, BOOKING_SEARCH_PASSWORD: PASSWORD }),
  );
}

/** How many requests the access log shows with `status`. */
function logged(stdout: string, status: number): number {
  return stdout.split('\n').filter((line) => new RegExp(`(\\s|"status":)${status}(\\s|,|}|$)`).test(line)).length;
}

async function waitForLog(server: { output: () => { stdout: string } }, status: number, count: number) {
  const deadline = Date.now() + 5_000;
  while (logged(server.output().stdout, status) < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return logged(server.output().stdout, status);
}

test(`Python urllib with HTTPBasicAuthHandler (challenge first): ${REQUESTS} searches, all 200`, async (t) => {
  const server = await serveForClients(t);
  const { stdout } = await run(
    'python3',
    ['-c', URLLIB_HANDLER, `${server.api}${SEARCH}`, USER, PASSWORD, `${REQUESTS}`],
    {
      timeout: 60_000,
    },
  );
  assert.deepEqual(JSON.parse(stdout), Array(REQUESTS).fill([200, 1]));
  // It really asked without credentials first, every time: one 401 per search.
  assert.equal(await waitForLog(server, 401, REQUESTS), REQUESTS);
});

test(`Python urllib with a manual Basic header, non-ASCII user and password: ${REQUESTS} searches, all 200`, async (t) => {
  const server = await serveForClients(t);
  const { stdout } = await run(
    'python3',
    ['-c', MANUAL_HEADER, `${server.api}${SEARCH}`, USER, PASSWORD, `${REQUESTS}`],
    {
      timeout: 60_000,
    },
  );
  assert.deepEqual(JSON.parse(stdout), Array(REQUESTS).fill([200, 1]));
});

test(`curl --anyauth (challenge first): ${REQUESTS} searches, all 200`, async (t) => {
  const server = await serveForClients(t);
  const urls = Array.from({ length: REQUESTS }, () => ['-o', '/dev/null', `${server.api}${SEARCH}`]).flat();
  const { stdout } = await run(
    'curl',
    [
      '--silent',
      '--show-error',
      '--anyauth',
      '--user',
      `${USER}:${PASSWORD}`,
      '--write-out',
      '%{http_code}\\n',
      ...urls,
    ],
    { timeout: 60_000 },
  );
  assert.deepEqual(stdout.trim().split('\n'), Array(REQUESTS).fill('200'));
  assert.equal(await waitForLog(server, 401, REQUESTS), REQUESTS, 'curl probed without credentials every time');
});

test('wrong passwords from Python are still throttled after 10 failures', async (t) => {
  const server = await serveForClients(t);
  const { stdout } = await run('python3', ['-c', MANUAL_HEADER, `${server.api}${SEARCH}`, USER, 'falsch', '12'], {
    timeout: 60_000,
  });
  const statuses = (JSON.parse(stdout) as [number, unknown][]).map(([status]) => status);
  assert.deepEqual(statuses, [...Array(10).fill(401), 429, 429]);
});
