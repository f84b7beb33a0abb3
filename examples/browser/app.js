// The lookup page: one bank line → the candidate cash bookings, from the
// booking-search-server API on another origin. Plain browser JavaScript, no build step.
//
// Credentials: typed into the form, kept only in the form, sent as an explicit Basic
// header with `credentials: 'omit'` — the browser neither stores nor volunteers them, and
// the page holds no secret of its own (see docs/clients.md, "Calling the API from a web page").

const form = document.querySelector('#suche');
const button = form.querySelector('button');
const fields = Object.fromEntries(
  ['api', 'user', 'password', 'datum', 'betrag', 'toleranz', 'tage'].map((id) => [
    id,
    document.querySelector(`#${id}`),
  ]),
);
const fehler = document.querySelector('#fehler');
const ergebnis = document.querySelector('#ergebnis');
const table = document.querySelector('#buchungen');

const euro = new Intl.NumberFormat('de-DE', { style: 'currency', currency: 'EUR' });
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

fields.api.value = new URLSearchParams(location.search).get('api') ?? 'http://127.0.0.1:8080/api/v1/';

form.addEventListener('submit', (event) => {
  event.preventDefault();
  button.disabled = true;
  search().finally(() => {
    button.disabled = false;
  });
});

async function search() {
  showNothing();
  let url;
  try {
    const base = fields.api.value.trim();
    url = new URL('buchungen', base.endsWith('/') ? base : `${base}/`);
  } catch {
    return showError('Die API-Adresse ist keine gültige URL.', '');
  }
  const datum = fields.datum.value;
  const tage = Math.max(0, Math.min(366, Number.parseInt(fields.tage.value, 10) || 0));
  // The service checks every value and says what is wrong; the page only widens the date.
  const von = ISO_DATE.test(datum) ? shiftDate(datum, -tage) : datum;
  const bis = ISO_DATE.test(datum) ? shiftDate(datum, tage) : datum;
  const query = new URLSearchParams({ von, bis, betrag: fields.betrag.value.trim() });
  const toleranz = fields.toleranz.value.trim();
  if (toleranz !== '') query.set('toleranz', toleranz);
  url.search = query.toString();

  let response;
  try {
    response = await fetch(url, {
      headers: { Authorization: basicAuthorization(fields.user.value, fields.password.value) },
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    // A refused CORS check and an unreachable service look the same to a page.
    return showError(
      `Keine Antwort vom Dienst unter ${url.origin}. Läuft er, stimmt die Adresse (mit Basispfad, bis /api/v1/), und ist diese Seite mit --cors-origin ${location.origin} freigegeben?`,
      '',
    );
  }
  let body;
  try {
    body = await response.json();
  } catch {
    return showError('Der Dienst hat keine lesbare Antwort geschickt.', `(HTTP ${response.status})`);
  }
  if (!response.ok) {
    const retry = response.headers.get('Retry-After');
    const status = retry === null ? `(HTTP ${response.status})` : `(HTTP ${response.status}, erneut in ${retry} s)`;
    return showError(typeof body.fehler === 'string' ? body.fehler : 'Unbekannter Fehler.', status);
  }
  showBookings(body, datum);
}

/** RFC 7617: Basic, user-id ":" password, UTF-8, base64 (btoa only takes bytes as Latin-1). */
function basicAuthorization(user, password) {
  let binary = '';
  for (const byte of new TextEncoder().encode(`${user}:${password}`)) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

function shiftDate(iso, days) {
  const [, year, month, day] = ISO_DATE.exec(iso).map(Number);
  return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
}

function daysBetween(from, to) {
  if (!ISO_DATE.test(from) || !ISO_DATE.test(to)) return '';
  const difference = (Date.parse(to) - Date.parse(from)) / 86_400_000;
  return difference > 0 ? `+${difference}` : difference < 0 ? `−${-difference}` : '0';
}

function showNothing() {
  fehler.hidden = true;
  ergebnis.hidden = true;
  table.hidden = true;
}

function showError(message, status) {
  fehler.querySelector('#fehler-text').textContent = message;
  fehler.querySelector('#fehler-status').textContent = status;
  fehler.hidden = false;
}

function showBookings({ anzahl, buchungen }, bankDate) {
  const noun = anzahl === 1 ? 'Kassenbuchung passt' : 'Kassenbuchungen passen';
  ergebnis.textContent =
    anzahl === 0
      ? 'Keine Kassenbuchung passt zu dieser Bankzeile.'
      : buchungen.length < anzahl
        ? `${anzahl} ${noun}; die neuesten ${buchungen.length} stehen hier.`
        : `${anzahl} ${noun}.`;
  ergebnis.dataset.anzahl = String(anzahl);
  ergebnis.hidden = false;

  const rows = buchungen.map((booking) => {
    const row = document.createElement('tr');
    row.dataset.id = String(booking.id);
    const cells = [
      [booking.datum.split('-').reverse().join('.'), ''],
      [daysBetween(bankDate, booking.datum), 'zahl'],
      [euro.format(booking.betrag), 'zahl'],
      [booking.zweck, ''],
      [booking.kategorie ?? '—', booking.kategorie === undefined ? 'leer' : ''],
      [booking.konto ?? '—', booking.konto === undefined ? 'leer' : ''],
      [String(booking.id), 'zahl'],
    ];
    for (const [text, className] of cells) {
      const cell = document.createElement('td');
      cell.textContent = text;
      if (className) cell.className = className;
      row.append(cell);
    }
    return row;
  });
  table.tBodies[0].replaceChildren(...rows);
  table.hidden = rows.length === 0;
}
