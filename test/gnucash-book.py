"""Writes a GnuCash SQLite book with GnuCash's own Python bindings (Debian: python3-gnucash,
libdbd-sqlite3), so that the gnucash mapping is tested on a file GnuCash itself wrote.

    /usr/bin/python3 test/gnucash-book.py BOOK.gnucash < ledger.json > guids.json

Reads the ledger (test/ledger-books.ts: accounts and transactions, amounts in cents from
each account's view) and prints, for every transaction, the guids of its splits in the
order of its sides, so that the test can name each booking's id.
"""

import json
import sys

from gnucash import Account, GncNumeric, Session, SessionOpenMode, Split, Transaction
from gnucash import gnucash_core_c as c

path = sys.argv[1]
ledger = json.load(sys.stdin)

# A new store is written by save(); the bookings go in after opening it again (writing
# them into the unsaved new store fails in GnuCash 4.13's DBI backend).
session = Session(f"sqlite3://{path}", SessionOpenMode.SESSION_NEW_STORE)
session.save()
session.end()
session.destroy()
session = Session(f"sqlite3://{path}", SessionOpenMode.SESSION_NORMAL_OPEN)
book = session.book
table = book.get_table()
root = book.get_root_account()
TYPES = {
    "ASSET": c.ACCT_TYPE_ASSET,
    "CASH": c.ACCT_TYPE_CASH,
    "BANK": c.ACCT_TYPE_BANK,
    "EXPENSE": c.ACCT_TYPE_EXPENSE,
    "INCOME": c.ACCT_TYPE_INCOME,
}


def account(name, kind, parent, currency):
    a = Account(book)
    a.BeginEdit()
    a.SetName(name)
    a.SetType(TYPES[kind])
    a.SetCommodity(table.lookup("CURRENCY", currency))
    parent.append_child(a)
    a.CommitEdit()
    return a


parents = {
    "ASSET": account("Aktiva", "ASSET", root, "EUR"),
    "EXPENSE": account("Aufwand", "EXPENSE", root, "EUR"),
    "INCOME": account("Erträge", "INCOME", root, "EUR"),
}
accounts = {}
for key, a in ledger["accounts"].items():
    under = parents["ASSET" if a["type"] in ("CASH", "BANK") else a["type"]]
    accounts[key] = account(a["name"], a["type"], under, a["currency"])

guids = []
for t in ledger["transactions"]:
    tx = Transaction(book)
    tx.BeginEdit()
    tx.SetCurrency(table.lookup("CURRENCY", t["currency"]))
    year, month, day = (int(part) for part in t["date"].split("-"))
    tx.SetDate(day, month, year)
    tx.SetDescription(t["description"])
    splits = []
    for side in t["sides"]:
        split = Split(book)
        split.SetParent(tx)
        split.SetAccount(accounts[side["account"]])
        split.SetValue(GncNumeric(side["cents"], 100))
        split.SetAmount(GncNumeric(side["cents"], 100))
        split.SetMemo(side.get("memo", ""))
        splits.append(split)
    # Committing an unbalanced transaction makes GnuCash book the rest to Imbalance-EUR.
    tx.CommitEdit()
    if t.get("voided"):
        tx.Void("Falsch erfasst")
    guids.append([split.GetGUID().to_string() for split in splits])
    if t.get("deleted"):
        tx.BeginEdit()
        tx.Destroy()
        tx.CommitEdit()

session.end()
session.destroy()
json.dump(guids, sys.stdout)
