import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeHelp, escapeLabelValue, type Family, formatValue, writeExposition } from '../../lib/exposition.js';

test('a counter and a gauge: HELP, TYPE, then one line per sample, each ending in a line feed', () => {
  const text = writeExposition([
    {
      type: 'counter',
      name: 'booking_search_requests_total',
      help: 'Requests answered.',
      samples: [
        { labels: { endpoint: 'search', status: '200' }, value: 1027 },
        { labels: { endpoint: 'search', status: '400', error: 'bad_query' }, value: 3 },
      ],
    },
    { type: 'gauge', name: 'booking_search_open_connections', help: 'Open connections.', samples: [{ value: 4 }] },
  ]);
  assert.equal(
    text,
    [
      '# HELP booking_search_requests_total Requests answered.',
      '# TYPE booking_search_requests_total counter',
      'booking_search_requests_total{endpoint="search",status="200"} 1027',
      'booking_search_requests_total{endpoint="search",status="400",error="bad_query"} 3',
      '# HELP booking_search_open_connections Open connections.',
      '# TYPE booking_search_open_connections gauge',
      'booking_search_open_connections 4',
      '',
    ].join('\n'),
  );
});

test('a histogram: cumulative buckets in increasing order, +Inf equal to _count, then _sum and _count', () => {
  const text = writeExposition([
    {
      type: 'histogram',
      name: 'booking_search_request_duration_seconds',
      help: 'Durations.',
      bounds: [0.001, 0.01, 0.1],
      series: [{ labels: { endpoint: 'status' }, counts: [5, 2, 0, 1], sum: 0.5125 }],
    },
  ]);
  assert.equal(
    text,
    [
      '# HELP booking_search_request_duration_seconds Durations.',
      '# TYPE booking_search_request_duration_seconds histogram',
      'booking_search_request_duration_seconds_bucket{endpoint="status",le="0.001"} 5',
      'booking_search_request_duration_seconds_bucket{endpoint="status",le="0.01"} 7',
      'booking_search_request_duration_seconds_bucket{endpoint="status",le="0.1"} 7',
      'booking_search_request_duration_seconds_bucket{endpoint="status",le="+Inf"} 8',
      'booking_search_request_duration_seconds_sum{endpoint="status"} 0.5125',
      'booking_search_request_duration_seconds_count{endpoint="status"} 8',
      '',
    ].join('\n'),
  );
});

test('label values escape backslash, double quote and line feed; HELP escapes backslash and line feed', () => {
  assert.equal(escapeLabelValue('C:\\DIR\\FILE.TXT'), 'C:\\\\DIR\\\\FILE.TXT');
  assert.equal(escapeLabelValue('Cannot find file:\n"FILE.TXT"'), 'Cannot find file:\\n\\"FILE.TXT\\"');
  assert.equal(escapeLabelValue('Bürobedarf'), 'Bürobedarf');
  assert.equal(escapeHelp('a \\ b\nc "d"'), 'a \\\\ b\\nc "d"');
  const text = writeExposition([
    { type: 'gauge', name: 'x', help: 'line\nbreak', samples: [{ labels: { book: 'Kasse "A"\\B' }, value: 1 }] },
  ]);
  assert.equal(text, '# HELP x line\\nbreak\n# TYPE x gauge\nx{book="Kasse \\"A\\"\\\\B"} 1\n');
});

test('values as Go floats: integers plain, +Inf, -Inf, NaN, small and large numbers in exponent form', () => {
  const cases: [number, string][] = [
    [0, '0'],
    [42, '42'],
    [0.005, '0.005'],
    [1e-7, '1e-7'],
    [2 ** 53, '9007199254740992'],
    [1.5e21, '1.5e+21'],
    [Number.POSITIVE_INFINITY, '+Inf'],
    [Number.NEGATIVE_INFINITY, '-Inf'],
    [Number.NaN, 'NaN'],
  ];
  for (const [value, expected] of cases) assert.equal(formatValue(value), expected, String(value));
});

test('misuse is thrown at once, naming the metric', () => {
  const gauge = (name: string, labels?: Record<string, string>): Family => ({
    type: 'gauge',
    name,
    help: 'h',
    samples: [{ ...(labels === undefined ? {} : { labels }), value: 1 }],
  });
  const cases: [Family[], RegExp][] = [
    [[gauge('1abc')], /metric name "1abc" is not a Prometheus name/],
    [[gauge('a-b')], /metric name "a-b"/],
    [[gauge('x'), gauge('x')], /metric x is written twice/],
    [[gauge('open_total')], /metric open_total: a counter's name ends in _total, and only a counter's/],
    [
      [{ type: 'counter', name: 'requests', help: 'h', samples: [] }],
      /metric requests: a counter's name ends in _total/,
    ],
    [[gauge('x_sum')], /metric x_sum: _bucket, _count and _sum belong to histograms/],
    [[gauge('x', { 'bad-name': 'v' })], /metric x: label name "bad-name"/],
    [[gauge('x', { __name: 'v' })], /metric x: label name "__name"/],
    [
      [
        {
          type: 'gauge',
          name: 'x',
          help: 'h',
          samples: [
            { labels: { a: '1' }, value: 1 },
            { labels: { a: '1' }, value: 2 },
          ],
        },
      ],
      /metric x has the labels \{a="1"\} twice/,
    ],
    [
      [{ type: 'histogram', name: 'h_seconds', help: 'h', bounds: [0.1, 0.1], series: [] }],
      /histogram h_seconds: bounds must be finite and increasing/,
    ],
    [
      [{ type: 'histogram', name: 'h_seconds', help: 'h', bounds: [0.1], series: [{ counts: [1], sum: 0 }] }],
      /histogram h_seconds needs 2 counts/,
    ],
    [
      [
        {
          type: 'histogram',
          name: 'h_seconds',
          help: 'h',
          bounds: [0.1],
          series: [{ labels: { le: '1' }, counts: [1, 0], sum: 0 }],
        },
      ],
      /histogram h_seconds: the label le is its own/,
    ],
  ];
  for (const [families, message] of cases) assert.throws(() => writeExposition(families), message);
});
