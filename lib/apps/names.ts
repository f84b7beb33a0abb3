// Accounts by name: a booking's `konto` is its account's own name (docs/applications.md,
// "What the mappings share"), as clients and a reconciliation's `konten` speak it. Two
// served accounts of one name (GnuCash's Assets:Nord:Kasse and Assets:Sued:Kasse) give the
// same `konto`, so `check` says so, naming them as the application shows them.

/**
 * A `notes` SELECT (lib/mapping.ts) of one sentence per name that two or more served
 * accounts share. `accounts` selects `name` (the `konto` its bookings get) and `shown` (the
 * account as `title` shows it, e.g. its full name), one row per served account.
 */
export function sharedAccountNames(accounts: string, title: string): string {
  return `
    SELECT count(*) || ' served accounts are named ''' || name || ''''
           || CASE WHEN max(shown) <> name OR min(shown) <> name THEN ' (' || group_concat(shown, ', ') || ')' ELSE '' END
           || ': a booking''s konto is its account''s own name; rename one in ${title} so that clients'
           || ' and konten can tell them apart.'
    FROM (SELECT name, shown FROM (${accounts}) ORDER BY shown)
    GROUP BY name HAVING count(*) > 1`;
}
