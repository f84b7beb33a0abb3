// Every `fehler` text a client can receive, in one place (docs/API.md, "Messages", is the
// contract; test/unit/contract.test.ts holds this list, that document and openapi.json
// together).

/** Fixed messages of the HTTP layer. */
export const MESSAGES = {
  unauthorized: 'Anmeldung erforderlich.',
  throttled: 'Zu viele fehlgeschlagene Anmeldeversuche. Bitte später erneut versuchen.',
  searchesWaiting: 'Zu viele Suchanfragen in Arbeit. Bitte später erneut versuchen.',
  notFound: 'Nicht gefunden.',
  methodNotAllowed: 'Methode nicht erlaubt.',
  searchFailed: 'Interner Fehler bei der Buchungssuche.',
  internal: 'Interner Fehler.',
  // Raised by Node's HTTP parser before a handler runs.
  badRequest: 'Ungültige Anfrage.',
  headersTooLarge: 'Anfragekopf zu groß.',
  timeout: 'Zeitüberschreitung der Anfrage.',
  expectationFailed: 'Erwartung nicht erfüllbar.',
} as const;

/** The validator's messages, rules 1–4 of docs/API.md; `name` is the parameter as sent. */
export const QUERY_MESSAGES = {
  badEncoding: 'Die Anfrage enthält ungültig kodierte Zeichen.',
  unknown: (name: string) => `Unbekannter Parameter '${name}'.`,
  repeated: (name: string) => `Parameter '${name}' darf nur einmal angegeben werden.`,
  missing: (name: string) => `Parameter '${name}' fehlt.`,
  date: (name: string) => `Parameter '${name}' muss ein gültiges Datum im Format JJJJ-MM-TT sein.`,
  betrag: "Parameter 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein.",
  toleranz: "Parameter 'toleranz' muss ein nicht negativer Betrag mit höchstens zwei Nachkommastellen sein.",
  waehrung: "Parameter 'waehrung' muss ein dreistelliger Währungscode sein.",
  limit: "Parameter 'limit' muss eine ganze Zahl zwischen 0 und 1000 sein.",
  range: "Der Zeitraum ist ungültig: 'von' liegt nach 'bis'.",
} as const;
