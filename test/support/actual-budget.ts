// A real Actual budget file, written by Actual's own package (@actual-app/api, a dev
// dependency) with all of Actual's migrations, in a temp dir: the file the service is
// tested on is the file Actual writes, not a copy of its schema.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as api from '@actual-app/api';

export interface ActualTransaction {
  date: string;
  /** Integer cents, Actual's sign: expenses negative. */
  amount: number;
  payee?: string;
  /** A category name from `categories`. */
  category?: string;
  notes?: string;
  /** The parts of a split, each with its own amount and category. */
  parts?: Array<{ amount: number; category?: string; notes?: string }>;
  /** A transfer to this account (by name): Actual writes the other side itself. */
  transferTo?: string;
  /** Written, then deleted in Actual (a tombstone row). */
  deleted?: boolean;
}

export interface ActualBudgetSpec {
  /** Synced preferences saved as Actual's settings save them (e.g. `defaultCurrencyCode`). */
  preferences?: Record<string, string>;
  categories: string[];
  accounts: Array<{ name: string; transactions: ActualTransaction[]; deleted?: boolean }>;
}

/** What Actual itself reports back through its API: the oracle of the tests. */
export interface ActualView {
  file: string;
  /** The budget's synced preferences, as Actual's API reads them back. */
  preferences: Record<string, unknown>;
  transactions: Array<{
    id: string;
    date: string;
    amount: number;
    account: string;
    payee: string | null;
    category: string | null;
    notes: string | null;
    isParent: boolean;
  }>;
}

/**
 * Writes the budget into `dataDir` through Actual's API and returns the path of its
 * db.sqlite, with the transactions as Actual's API lists them (split parents with their
 * whole amount; deleted ones and those of deleted accounts left out).
 */
export async function writeActualBudget(dataDir: string, spec: ActualBudgetSpec): Promise<ActualView> {
  const quiet = silenceConsole();
  try {
    const actual = await api.init({ dataDir });
    const view: ActualView['transactions'] = [];
    let preferences: ActualView['preferences'] = {};
    await api.runImport('Kasse', async () => {
      for (const [id, value] of Object.entries(spec.preferences ?? {})) {
        await actual.send('preferences/save', { id, value } as never);
      }
      const group = await api.createCategoryGroup({ name: 'Ausgaben' });
      const categoryIds = new Map<string, string>();
      for (const name of spec.categories) categoryIds.set(name, await api.createCategory({ name, group_id: group }));
      const accountIds = new Map<string, string>();
      for (const { name } of spec.accounts) {
        accountIds.set(name, await api.createAccount({ name, offbudget: false }, 0));
      }
      const payees = await api.getPayees();
      const transferPayee = (account: string): string | undefined =>
        payees.find((payee) => payee.transfer_acct === accountIds.get(account))?.id;
      const category = (name: string | undefined): string | undefined =>
        name === undefined ? undefined : categoryIds.get(name);
      const written = (tx: ActualTransaction) => ({
        date: tx.date,
        amount: tx.amount,
        ...(tx.payee === undefined ? {} : { payee_name: tx.payee }),
        ...(tx.transferTo === undefined ? {} : { payee: transferPayee(tx.transferTo) }),
        ...(tx.category === undefined ? {} : { category: category(tx.category) }),
        ...(tx.notes === undefined ? {} : { notes: tx.notes }),
        ...(tx.parts === undefined
          ? {}
          : {
              subtransactions: tx.parts.map((part) => ({
                amount: part.amount,
                ...(part.category === undefined ? {} : { category: category(part.category) }),
                ...(part.notes === undefined ? {} : { notes: part.notes }),
              })),
            }),
      });
      for (const account of spec.accounts) {
        const id = accountIds.get(account.name) as string;
        // Consecutive transactions go in one call (one call each would take minutes for
        // thousands); one to be deleted goes alone, and is deleted right after.
        let batch: ActualTransaction[] = [];
        const flush = async (): Promise<void> => {
          if (batch.length > 0) await api.addTransactions(id, batch.map(written) as never, { runTransfers: true });
          batch = [];
        };
        for (const tx of account.transactions) {
          if (tx.deleted !== true) {
            batch.push(tx);
            continue;
          }
          await flush();
          batch = [tx];
          await flush();
          const rows = (await api.getTransactions(id, tx.date, tx.date)) as Array<{ id: string; amount: number }>;
          const row = rows.find((candidate) => candidate.amount === tx.amount);
          if (row === undefined) throw new Error(`the transaction to delete on ${tx.date} is not there`);
          await api.deleteTransaction(row.id);
        }
        await flush();
      }
      for (const account of spec.accounts) {
        if (account.deleted === true) await api.deleteAccount(accountIds.get(account.name) as string);
      }
      preferences = { ...(await api.getPreferences()) };
      const names = new Map((await api.getPayees()).map((payee) => [payee.id, payee] as const));
      const categoryNames = new Map([...categoryIds].map(([name, id]) => [id, name] as const));
      const accountNames = new Map([...accountIds].map(([name, id]) => [id, name] as const));
      for (const account of spec.accounts) {
        if (account.deleted === true) continue;
        const id = accountIds.get(account.name) as string;
        const listed = (await api.getTransactions(id, '1900-01-01', '2999-12-31')) as Array<{
          id: string;
          date: string;
          amount: number;
          payee: string | null;
          category: string | null;
          notes: string | null;
          is_parent: boolean;
          tombstone: boolean;
        }>;
        for (const tx of listed) {
          if (tx.tombstone) continue;
          const payee = tx.payee === null ? undefined : names.get(tx.payee);
          view.push({
            id: tx.id,
            date: tx.date,
            amount: tx.amount,
            account: account.name,
            payee:
              payee === undefined
                ? null
                : payee.transfer_acct
                  ? (accountNames.get(payee.transfer_acct) ?? null)
                  : payee.name || null,
            category: tx.category === null ? null : (categoryNames.get(tx.category) ?? null),
            notes: tx.notes,
            isParent: tx.is_parent,
          });
        }
      }
    });
    const [budget] = readdirSync(dataDir);
    await api.shutdown();
    return { file: join(dataDir, budget as string, 'db.sqlite'), preferences, transactions: view };
  } finally {
    quiet();
  }
}

// Actual's API logs every step of loading a budget to the console.
function silenceConsole(): () => void {
  const saved = { log: console.log, info: console.info, warn: console.warn, debug: console.debug };
  const nothing = (): void => {};
  Object.assign(console, { log: nothing, info: nothing, warn: nothing, debug: nothing });
  return () => Object.assign(console, saved);
}
