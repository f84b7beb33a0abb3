// --socket-group NAME: the group's number as the system's name service knows it (getent
// group asks NSS), so a group from LDAP or sssd is found as well as one in /etc/group.

import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';
import { CliError } from '../../bin/base/errors.js';
import { groupId } from '../../bin/listen/socket.js';

test('a group number is taken as it is, and root is found by name', () => {
  assert.equal(groupId('4711'), 4711);
  assert.equal(groupId('root'), 0);
});

test('a group name is looked up through the name service, not only in /etc/group', (t) => {
  // A stand-in for getent that knows a group /etc/group does not hold, as LDAP would.
  const dir = mkdtempSync(join(tmpdir(), 'getent-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const getent = join(dir, 'getent');
  writeFileSync(
    getent,
    '#!/bin/sh\n[ "$1" = group ] && [ "$2" = ldap-proxies ] && { echo "ldap-proxies:*:23456:www-data"; exit 0; }\nexit 2\n',
  );
  chmodSync(getent, 0o755);
  const path = process.env['PATH'];
  process.env['PATH'] = `${dir}${delimiter}${path}`;
  t.after(() => {
    process.env['PATH'] = path;
  });
  assert.equal(groupId('ldap-proxies'), 23456);
  assert.throws(
    () => groupId('keine-gruppe'),
    (error: unknown) => error instanceof CliError,
  );
  assert.throws(() => groupId('keine-gruppe'), {
    message: "no group 'keine-gruppe' on this system (getent group keine-gruppe); give its number instead",
  });
  assert.throws(() => groupId('--help'), /no group '--help'/);
});

test('on macOS, which has no getent, a group name is asked of the directory service (dscl)', (t) => {
  // A stand-in for macOS' dscl, and no getent at all on PATH.
  const dir = mkdtempSync(join(tmpdir(), 'dscl-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'dscl'),
    '#!/bin/sh\n[ "$1" = /Search ] && [ "$2" = -read ] && [ "$3" = /Groups/staff ] && [ "$4" = PrimaryGroupID ] && { echo "PrimaryGroupID: 20"; exit 0; }\necho "<dscl_cmd> DS Error: -14136 (eDSRecordNotFound)" >&2; exit 56\n',
  );
  chmodSync(join(dir, 'dscl'), 0o755);
  const path = process.env['PATH'];
  process.env['PATH'] = dir;
  t.after(() => {
    process.env['PATH'] = path;
  });
  assert.equal(groupId('staff', 'darwin'), 20);
  assert.throws(() => groupId('keine-gruppe', 'darwin'), {
    message:
      "no group 'keine-gruppe' on this system (dscl /Search -read /Groups/keine-gruppe PrimaryGroupID); give its number instead",
  });
  assert.throws(() => groupId('../Users/root', 'darwin'), /no group/);
});
