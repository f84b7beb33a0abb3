// What /metrics says for the counts of several processes (bin/admin/service-metrics.ts).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { test } from 'node:test';
import { noneRetired, type ProcessReport, renderMetrics, retire } from '../../bin/admin/service-metrics.js';
import { ERROR_CODES, ERRORS } from '../../lib/messages.js';
import { LOGIN_FAILURES, REFUSALS } from '../../lib/metric-families.js';
import { Metrics } from '../../lib/metrics.js';
import { sendError } from '../../lib/respond.js';

const SERVICE = {
  version: '1.0.0',
  startTime: 1_773_478_800,
  serving: 2,
  restarts: 1,
  ownCpuSeconds: 0.5,
  ownResidentBytes: 40_000_000,
};

function report(build: (metrics: Metrics) => void, state: 'serving' | 'waiting'): ProcessReport {
  const metrics = new Metrics();
  build(metrics);
  return {
    metrics: metrics.snapshot(),
    connections: 3,
    books: [{ name: 'kasse', basePath: '', state, since: '2026-03-14T09:00:00.000Z', replaced: 1 }],
    cpuSeconds: 2,
    residentBytes: 60_000_000,
    reload: { successful: true, successTime: SERVICE.startTime },
  };
}

/** The sample lines of `name` (with its labels), as written. */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

test('the counts of all processes add up, with those of processes that ended, so that no counter drops', () => {
  const a = report((m) => {
    for (let i = 0; i < 5; i += 1) m.countRequest('search', 'ok', 0.0003);
    m.countRequest('search', 'bad_query', 0.00005);
    m.countSearchWait(0.002);
    (m.failedLogins[LOGIN_FAILURES.indexOf('wrong_credentials')] as number) += 2;
    (m.refusals[REFUSALS.indexOf('user')] as number) += 7;
    (m.hashChecks[0] as number) += 1;
  }, 'serving');
  const b = report((m) => {
    m.countRequest('search', 'ok', 0.02);
    m.countRequest('status', 'unauthorized', 0.00002);
    (m.failedLogins[LOGIN_FAILURES.indexOf('no_credentials')] as number) += 1;
  }, 'waiting');
  const retired = noneRetired();
  retire(
    retired,
    report((m) => m.countRequest('search', 'ok', 0.0003), 'serving'),
  );
  const text = renderMetrics([a, b], retired, SERVICE);

  assert.deepEqual(samples(text, 'booking_search_requests_total'), [
    'booking_search_requests_total{endpoint="status",status="200"} 0',
    'booking_search_requests_total{endpoint="status",status="401",error="unauthorized"} 1',
    'booking_search_requests_total{endpoint="search",status="200"} 7',
    'booking_search_requests_total{endpoint="search",status="400",error="bad_query"} 1',
    'booking_search_requests_total{endpoint="abgleich",status="200"} 0',
  ]);
  assert.ok(text.includes('booking_search_request_duration_seconds_bucket{endpoint="search",le="0.0001"} 1\n'));
  assert.ok(text.includes('booking_search_request_duration_seconds_bucket{endpoint="search",le="0.0005"} 7\n'));
  assert.ok(text.includes('booking_search_request_duration_seconds_bucket{endpoint="search",le="+Inf"} 8\n'));
  assert.ok(text.includes('booking_search_request_duration_seconds_count{endpoint="search"} 8\n'));
  assert.ok(text.includes('booking_search_search_wait_seconds_bucket{le="0.0025"} 1\n'));
  assert.deepEqual(samples(text, 'booking_search_failed_logins_total'), [
    'booking_search_failed_logins_total{reason="wrong_credentials"} 2',
    'booking_search_failed_logins_total{reason="no_credentials"} 1',
  ]);
  assert.ok(text.includes('booking_search_refusals_total{reason="user"} 7\n'));
  assert.deepEqual(samples(text, 'booking_search_hash_checks'), [
    'booking_search_hash_checks{state="running"} 1',
    'booking_search_hash_checks{state="waiting"} 0',
  ]);
  assert.deepEqual(samples(text, 'booking_search_open_connections'), ['booking_search_open_connections 6']);
  assert.deepEqual(samples(text, 'booking_search_book_state'), [
    'booking_search_book_state{book="kasse",state="serving"} 1',
    'booking_search_book_state{book="kasse",state="waiting"} 1',
    'booking_search_book_state{book="kasse",state="missing"} 0',
    'booking_search_book_state{book="kasse",state="unusable"} 0',
  ]);
  assert.deepEqual(samples(text, 'booking_search_book_replacements_total'), [
    'booking_search_book_replacements_total{book="kasse"} 3',
  ]);
  assert.deepEqual(samples(text, 'process_cpu_seconds_total'), ['process_cpu_seconds_total 6.5']);
  assert.deepEqual(samples(text, 'process_resident_memory_bytes'), ['process_resident_memory_bytes 160000000']);
  assert.deepEqual(samples(text, 'booking_search_processes'), ['booking_search_processes 2']);
  assert.deepEqual(samples(text, 'booking_search_worker_restarts_total'), ['booking_search_worker_restarts_total 1']);
  assert.match(text, /^booking_search_build_info\{version="1\.0\.0",node="[\d.]+",sqlite="3\.\d+\.\d+"\} 1$/m);
});

// A reconciliation's bad_body was counted with status="undefined".
test('every error code is counted with the status it is answered with', () => {
  const text = renderMetrics(
    [
      report((m) => {
        for (const code of ERROR_CODES) m.countRequest('other', code, 0);
      }, 'serving'),
    ],
    noneRetired(),
    SERVICE,
  );
  const statuses = samples(text, 'booking_search_requests_total')
    .filter((line) => line.includes('endpoint="other"'))
    .map((line) => /status="([^"]*)",error="([^"]*)"/.exec(line)?.slice(1).join(' '));
  assert.equal(statuses.length, ERROR_CODES.length);
  assert.deepEqual(
    statuses.filter((status) => !/^[45]\d\d /.test(status ?? '')),
    [],
  );
  assert.ok(statuses.includes('400 bad_body') && statuses.includes('400 bad_query'), statuses.join(', '));
});

// An ended worker's last hash checks were added to every sum after it, as if still running.
test('a process that ended keeps its counters in the sums, but not its hash checks, which ended with it', () => {
  const retired = noneRetired();
  retire(
    retired,
    report((m) => {
      m.countRequest('search', 'ok', 0.0003);
      m.hashChecks.set([1, 2]);
    }, 'serving'),
  );
  const text = renderMetrics([report((m) => m.hashChecks.set([1, 0]), 'serving')], retired, SERVICE);
  assert.ok(text.includes('\nbooking_search_requests_total{endpoint="search",status="200"} 1\n'), text);
  assert.deepEqual(samples(text, 'booking_search_hash_checks'), [
    'booking_search_hash_checks{state="running"} 1',
    'booking_search_hash_checks{state="waiting"} 0',
  ]);
});

// A worker's counts cross a process boundary: the primary reads them, it does not trust them.
test("counts that are not the counts' shape add nothing, and what fits of them adds up", () => {
  const good = report((m) => m.countRequest('search', 'ok', 0.0003), 'serving');
  const misshapen = [null, 'requests', 7, { requests: 'all', refusals: ['1', null, 2] }].map((metrics) => ({
    ...report(() => {}, 'serving'),
    metrics,
  }));
  const retired = noneRetired();
  retire(retired, { ...good, metrics: [] });
  const text = renderMetrics([good, ...misshapen], retired, SERVICE);
  assert.ok(text.includes('\nbooking_search_requests_total{endpoint="search",status="200"} 1\n'), text);
  assert.deepEqual(samples(text, 'booking_search_refusals_total').slice(0, 3), [
    'booking_search_refusals_total{reason="address"} 0',
    'booking_search_refusals_total{reason="client"} 0',
    'booking_search_refusals_total{reason="user"} 2',
  ]);
});

// A refused reload was visible only in the log.
test("the last reload's result: 0 when one process kept what it served; the oldest applied reload's time", () => {
  const applied = { ...report(() => {}, 'serving'), reload: { successful: true, successTime: 1_773_480_000 } };
  const refused = { ...report(() => {}, 'serving'), reload: { successful: false, successTime: 1_773_479_000 } };
  const both = renderMetrics([applied, refused], noneRetired(), SERVICE);
  assert.deepEqual(samples(both, 'booking_search_config_last_reload_successful'), [
    'booking_search_config_last_reload_successful 0',
  ]);
  assert.deepEqual(samples(both, 'booking_search_config_last_reload_success_timestamp_seconds'), [
    'booking_search_config_last_reload_success_timestamp_seconds 1773479000',
  ]);
  const one = renderMetrics([applied], noneRetired(), SERVICE);
  assert.deepEqual(samples(one, 'booking_search_config_last_reload_successful'), [
    'booking_search_config_last_reload_successful 1',
  ]);
});

/** Each metric /metrics writes, by its name, with the names of its labels (a histogram's `le` left out). */
function labelsOf(text: string): Map<string, string[]> {
  const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1] ?? '', match[2] ?? '']));
  const labels = new Map<string, string[]>();
  for (const [, sample = '', set = ''] of text.matchAll(/^([a-z_]+)(?:\{([^}]*)\})? \S+$/gm)) {
    const name = types.has(sample) ? sample : sample.replace(/_(?:bucket|sum|count)$/, '');
    const keys = [...set.matchAll(/([a-z_]+)="/g)].map((match) => match[1] ?? '').filter((key) => key !== 'le');
    labels.set(name, [...new Set([...(labels.get(name) ?? []), ...keys])].sort());
  }
  return labels;
}

test("docs/operations.md's table of metrics gives each metric the labels /metrics writes, and no other", () => {
  const counted = report((m) => {
    m.countRequest('search', 'bad_query', 0.00005);
    m.countSearchWait(0.002);
  }, 'serving');
  const text = renderMetrics([counted], noneRetired(), SERVICE);
  const written = labelsOf(text);
  const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const table = (operations.split('### The metrics')[1] ?? '').split('\n```')[0] ?? '';
  const rows = table.split('\n').filter((line) => line.startsWith('| `'));
  assert.ok(rows.length >= 8, `${rows.length} rows`);
  let checked = 0;
  for (const row of rows) {
    const [metrics = '', , labels = ''] = row.split(' | ');
    // A label's values are in parentheses or after a colon; the labels are the names before.
    const names = (labels.replace(/\([^)]*\)/g, '').split(':')[0] ?? '').matchAll(/`([a-z_]+)`/g);
    const documented = [...names].map((match) => match[1] ?? '').sort();
    for (const [, name = ''] of metrics.matchAll(/`([^`]+)`/g)) {
      const metric = [...written.keys()].find((key) => key === name || key.endsWith(name.replace('…', '')));
      assert.ok(metric !== undefined, `${name} is written by /metrics`);
      assert.deepEqual(written.get(metric), documented, `the labels of ${metric}`);
      checked += 1;
    }
  }
  assert.ok(checked > rows.length, `${checked} metrics checked`);
});

test('an answer that refuses is counted as its refusal, by its code: searches, hash checks, unanswered requests', () => {
  const metrics = new Metrics();
  for (const error of [ERRORS.tooManySearches, ERRORS.tooManySearches, ERRORS.busy, ERRORS.tooManyUnanswered]) {
    const res = new ServerResponse(new IncomingMessage(new Socket()));
    sendError(res, error);
    // Written on no socket: ended as far as the count is concerned.
    Object.defineProperty(res, 'writableFinished', { value: true });
    metrics.countAnswer(res.req, res, 0.001);
  }
  const refusals = Object.fromEntries(REFUSALS.map((reason, i) => [reason, metrics.refusals[i]]));
  assert.deepEqual(
    { searches: refusals.searches, hash_checks: refusals.hash_checks, unanswered: refusals.unanswered },
    { searches: 2, hash_checks: 1, unanswered: 1 },
  );
});
