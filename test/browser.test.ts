// A real browser against the real CLI: Debian's chromium, headless, driven by
// puppeteer-core, loads examples/browser/ from another origin (docs/API.md, Browser
// clients (CORS)). No browser is ever downloaded: without one this test fails.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { QUERY_MESSAGES } from '../lib/messages.js';
import { cleanEnv, start } from './support/cli-helpers.js';
import { basicAuth, request, tempDir } from './support/helpers.js';

const CHROMIUM = process.env['CHROMIUM'] ?? '/usr/bin/chromium';
const SERVE_PAGE = new URL('../examples/browser/serve.mjs', import.meta.url).pathname;
// Non-ASCII on purpose: the page must send them as UTF-8 (RFC 7617 §2.1).
const USER = 'Kassenprüferin';
const PASSWORD = 'Grüße:€-ß';

// What the functions run inside the page touch; the project's TypeScript has no DOM library.
interface PageElement {
  hidden: boolean;
  value: string;
  textContent: string | null;
  dataset: Record<string, string | undefined>;
  querySelector(selector: string): PageElement | null;
}
declare const document: { querySelector(selector: string): PageElement | null };

interface Booking {
  id: number;
  datum: string;
  betrag: number;
}

/** examples/browser/serve.mjs on a free port; returns the page's origin. */
async function servePage(t: test.TestContext): Promise<string> {
  const child = spawn(process.execPath, [SERVE_PAGE], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => void child.kill('SIGKILL'));
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const deadline = Date.now() + 10_000;
  let match = /^page on (http:\/\/127\.0\.0\.1:\d+)\//m.exec(out);
  while (match === null) {
    assert.ok(Date.now() < deadline && child.exitCode === null, `serve.mjs did not start: ${out}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
    match = /^page on (http:\/\/127\.0\.0\.1:\d+)\//m.exec(out);
  }
  return match[1] as string;
}

/** With SCREENSHOTS=dir, keeps a picture of the page for a human to look at. */
async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env['SCREENSHOTS'];
  if (dir) await page.screenshot({ path: `${join(dir, name)}.png`, fullPage: true });
}

function shift(isoDate: string, days: number): string {
  const date = new Date(`${isoDate}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

async function launch(t: test.TestContext): Promise<Browser> {
  assert.ok(
    existsSync(CHROMIUM),
    `no browser at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM; this test never skips`,
  );
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: join(tempDir(t), 'profile'),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--lang=de-DE',
    ],
    timeout: 30_000,
  });
  t.after(() => browser.close());
  return browser;
}

async function fillAndSearch(page: Page, values: Record<string, string>): Promise<void> {
  for (const [id, value] of Object.entries(values)) {
    await page.evaluate(
      (selector, text) => {
        (document.querySelector(selector) as PageElement).value = text;
      },
      `#${id}`,
      value,
    );
  }
  await page.evaluate(() => {
    (document.querySelector('#ergebnis') as PageElement).hidden = true;
    (document.querySelector('#fehler') as PageElement).hidden = true;
  });
  await page.click('button[type=submit]');
  await page.waitForFunction(
    () =>
      !(document.querySelector('#ergebnis') as PageElement).hidden ||
      !(document.querySelector('#fehler') as PageElement).hidden,
    { timeout: 10_000 },
  );
}

function errorText(page: Page): Promise<string | null> {
  return page.$eval('#fehler', (element) =>
    (element as unknown as PageElement).hidden ? null : (element.querySelector('#fehler-text')?.textContent ?? ''),
  );
}

test('examples/browser in headless Chromium: bookings on a listed origin, nothing on another, the service’s own 400 and 401 texts', async (t) => {
  const listedPage = await servePage(t);
  const otherPage = await servePage(t);
  const server = await start(
    t,
    ['--demo', '--cors-origin', listedPage],
    cleanEnv({ BOOKING_SEARCH_USER: USER, BOOKING_SEARCH_PASSWORD: PASSWORD }),
  );
  const authorization = basicAuth(USER, PASSWORD);

  // A booking of the demo data and what the API says about its bank line.
  const newest = JSON.parse(
    (
      await request(`${server.api}buchungen?von=2000-01-01&bis=2999-12-31&betrag=0&toleranz=99999999&limit=1`, {
        headers: { authorization },
      })
    ).body,
  ) as { buchungen: Booking[] };
  const booking = newest.buchungen[0] as Booking;
  const expected = JSON.parse(
    (
      await request(
        `${server.api}buchungen?von=${shift(booking.datum, -3)}&bis=${shift(booking.datum, 3)}&betrag=${booking.betrag}&toleranz=5`,
        {
          headers: { authorization },
        },
      )
    ).body,
  ) as { anzahl: number; buchungen: Booking[] };
  assert.ok(expected.anzahl >= 1);

  const browser = await launch(t);
  const page = await browser.newPage();
  await page.setViewport({ width: 1100, height: 700 });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  const base = { api: server.api, user: USER, password: PASSWORD, tage: '0' };

  await t.test('the page on a listed origin shows the bookings of a search and the total anzahl', async () => {
    await page.goto(`${listedPage}/?api=${encodeURIComponent(server.api)}`);
    const amount = String(booking.betrag).replace('.', ',');
    await fillAndSearch(page, { ...base, datum: booking.datum, betrag: amount, toleranz: '5,00', tage: '3' });
    assert.equal(await errorText(page), null);
    assert.equal(
      await page.$eval('#ergebnis', (element) => (element as unknown as PageElement).dataset['anzahl']),
      String(expected.anzahl),
    );
    const ids = await page.$$eval('#buchungen tbody tr', (rows) =>
      rows.map((row) => Number((row as unknown as PageElement).dataset['id'])),
    );
    assert.deepEqual(
      ids,
      expected.buchungen.map((b) => b.id),
    );
    const firstRow = await page.$eval('#buchungen tbody tr', (row) => (row as unknown as PageElement).textContent);
    assert.match(firstRow ?? '', new RegExp(booking.datum.split('-').reverse().join('.').replaceAll('.', '\\.')));
    await screenshot(page, 'bookings');
  });

  await t.test('the page shows the service’s 400 message as the service words it', async () => {
    await fillAndSearch(page, { ...base, datum: booking.datum, betrag: '12.345', toleranz: '0' });
    assert.equal(await errorText(page), QUERY_MESSAGES.betrag);
    assert.equal(await page.$eval('#fehler-status', (element) => element.textContent), '(HTTP 400)');
    await screenshot(page, 'error-400');
    assert.equal(await page.$eval('#ergebnis', (element) => (element as unknown as PageElement).hidden), true);
  });

  await t.test('the page shows the 401 message for a wrong password', async () => {
    await fillAndSearch(page, { ...base, password: 'falsch', datum: booking.datum, betrag: '1', toleranz: '0' });
    assert.equal(await errorText(page), 'Anmeldung erforderlich.');
    assert.equal(await page.$eval('#fehler-status', (element) => element.textContent), '(HTTP 401)');
  });

  // The preflight of a path that is no endpoint is an ordinary request (401): the browser
  // hides the 404 the wrong base path would get, and the page says what to check.
  await t.test('a wrong base path fails as fetch does, and the page names the address among the causes', async () => {
    const wrong = server.api.replace('/api/v1/', '/kasse/api/v1/');
    await fillAndSearch(page, {
      ...base,
      api: wrong,
      datum: booking.datum,
      betrag: String(booking.betrag),
      toleranz: '0',
    });
    assert.match(
      (await errorText(page)) ?? '',
      /^Keine Antwort vom Dienst .* stimmt die Adresse \(mit Basispfad, bis \/api\/v1\/\)/,
    );
  });

  await t.test('a page on an unlisted origin cannot read the bookings: fetch fails', async () => {
    const other = await browser.newPage();
    await other.goto(`${otherPage}/?api=${encodeURIComponent(server.api)}`);
    const outcome = await other.evaluate(
      async (url: string, header: string) => {
        try {
          const response = await fetch(url, { headers: { Authorization: header }, credentials: 'omit' });
          return `read ${response.status}: ${await response.text()}`;
        } catch (error: unknown) {
          return `failed: ${String(error)}`;
        }
      },
      `${server.api}buchungen?von=${booking.datum}&bis=${booking.datum}&betrag=${booking.betrag}`,
      authorization,
    );
    assert.equal(outcome, 'TypeError: Failed to fetch'.replace(/^/, 'failed: '));
    await fillAndSearch(other, { ...base, datum: booking.datum, betrag: String(booking.betrag), toleranz: '0' });
    assert.match(
      (await errorText(other)) ?? '',
      new RegExp(`^Keine Antwort vom Dienst .* --cors-origin ${otherPage.replaceAll('.', '\\.')} freigegeben\\?$`),
    );
    await screenshot(other, 'unlisted-origin');
    assert.equal(await other.$eval('#ergebnis', (element) => (element as unknown as PageElement).hidden), true);
  });

  await t.test(
    'a page on a listed origin reconciles a bank line: POST with a JSON body, after the preflight',
    async () => {
      const reconcile = async (on: typeof page): Promise<string> =>
        on.evaluate(
          async (url: string, header: string, body: string) => {
            try {
              const response = await fetch(url, {
                method: 'POST',
                headers: { Authorization: header, 'Content-Type': 'application/json' },
                body,
              });
              return `read ${response.status}: ${await response.text()}`;
            } catch (error: unknown) {
              return `failed: ${String(error)}`;
            }
          },
          `${server.api}abgleich`,
          authorization,
          JSON.stringify({
            zeilen: [{ ref: 'Kontoauszug 1/1', datum: booking.datum, betrag: booking.betrag, tage: 0 }],
          }),
        );
      const outcome = await reconcile(page);
      assert.match(outcome, /^read 200: /);
      const answer = JSON.parse(outcome.slice('read 200: '.length)) as {
        zeilen: Array<{ ref: string; buchungen: Booking[]; kandidaten: number }>;
      };
      assert.equal(answer.zeilen[0]?.ref, 'Kontoauszug 1/1');
      assert.equal(answer.zeilen[0]?.buchungen[0]?.betrag, booking.betrag);
      const other = await browser.newPage();
      await other.goto(`${otherPage}/?api=${encodeURIComponent(server.api)}`);
      assert.equal(await reconcile(other), 'failed: TypeError: Failed to fetch');
    },
  );

  assert.deepEqual(pageErrors, []);
});
