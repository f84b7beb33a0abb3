"""Writes and reads GnuCash SQLite books with GnuCash's own Python bindings (Debian:
python3-gnucash, libdbd-sqlite3), so that the gnucash mapping is tested on files GnuCash
itself wrote, and its answers held to what GnuCash itself reads from them.

    /usr/bin/python3 test/gnucash-book.py write BOOK.gnucash < book.json > guids.json
    /usr/bin/python3 test/gnucash-book.py read BOOK.gnucash > view.json

Both run in the time zone of the process (TZ), as GnuCash does.

write: reads the book (test/ledger-books.ts: accounts, transactions with amounts in cents,
the "Use Trading Accounts" option) and prints, for every transaction, the guids of its
splits in the order of its sides, so that the test can name each booking's id.

read: opens the book read-only and prints every split as GnuCash reads it: its account
(name, type, commodity, whether it sits at the top level), whether it is void, the date
GnuCash shows for its transaction (GnuCash's own local time of the posted date, as its
register shows it), its amount, its transaction's description, and the account of the
other split as GnuCash's register names it (xaccSplitGetOtherSplit: none for a split
transaction).
"""

import json
import sqlite3
import sys
import uuid
from datetime import datetime

from gnucash import Account, GncNumeric, Session, SessionOpenMode, Split, Transaction
from gnucash import gnucash_core_c as c

mode, path = sys.argv[1], sys.argv[2]

TYPES = {
    "ASSET": c.ACCT_TYPE_ASSET,
    "CASH": c.ACCT_TYPE_CASH,
    "BANK": c.ACCT_TYPE_BANK,
    "EXPENSE": c.ACCT_TYPE_EXPENSE,
    "INCOME": c.ACCT_TYPE_INCOME,
}
TYPE_NAMES = {
    c.ACCT_TYPE_BANK: "BANK",
    c.ACCT_TYPE_CASH: "CASH",
    c.ACCT_TYPE_ASSET: "ASSET",
    c.ACCT_TYPE_CREDIT: "CREDIT",
    c.ACCT_TYPE_LIABILITY: "LIABILITY",
    c.ACCT_TYPE_EXPENSE: "EXPENSE",
    c.ACCT_TYPE_INCOME: "INCOME",
    c.ACCT_TYPE_EQUITY: "EQUITY",
    c.ACCT_TYPE_TRADING: "TRADING",
    c.ACCT_TYPE_ROOT: "ROOT",
}


def use_trading_accounts(path):
    """File › Properties › Accounts › "Use Trading Accounts", stored as GnuCash's SQL
    backend stores a book option: a frame of slots on the book."""
    db = sqlite3.connect(path)
    book = db.execute("SELECT guid FROM books").fetchone()[0]
    options, accounts = uuid.uuid4().hex, uuid.uuid4().hex
    insert = (
        "INSERT INTO slots (obj_guid, name, slot_type, int64_val, string_val, double_val,"
        " timespec_val, guid_val, numeric_val_num, numeric_val_denom, gdate_val)"
        " VALUES (?, ?, ?, 0, ?, 0, '1970-01-01 00:00:00', ?, 0, 1, NULL)"
    )
    db.execute(insert, (book, "options", 9, None, options))
    db.execute(insert, (options, "options/Accounts", 9, None, accounts))
    db.execute(insert, (accounts, "options/Accounts/Use Trading Accounts", 4, "t", None))
    db.commit()
    db.close()


def write(ledger):
    # A new store is written by save(); the bookings go in after opening it again (writing
    # them into the unsaved new store fails in GnuCash 4.13's DBI backend).
    session = Session(f"sqlite3://{path}", SessionOpenMode.SESSION_NEW_STORE)
    session.save()
    session.end()
    session.destroy()
    if ledger.get("trading"):
        use_trading_accounts(path)
    session = Session(f"sqlite3://{path}", SessionOpenMode.SESSION_NORMAL_OPEN)
    book = session.book
    if book.use_trading_accounts() != bool(ledger.get("trading")):
        raise SystemExit("GnuCash did not read the trading accounts option as written")
    table = book.get_table()
    root = book.get_root_account()

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
        if "time" in t:
            # A script or an importer through GnuCash's API: a time of day of its own, in
            # the local time of the process (the bindings convert with gnc_mktime).
            hour, minute, second = (int(part) for part in t["time"].split(":"))
            tx.SetDatePostedSecs(datetime(year, month, day, hour, minute, second))
        else:
            # GnuCash's register and importers: the day at neutral time.
            tx.SetDate(day, month, year)
        tx.SetDescription(t["description"])
        splits = []
        for side in t["sides"]:
            split = Split(book)
            split.SetParent(tx)
            split.SetAccount(accounts[side["account"]])
            split.SetValue(GncNumeric(side["cents"], 100))
            split.SetAmount(GncNumeric(side.get("amount", side["cents"]), 100))
            split.SetMemo(side.get("memo", ""))
            splits.append(split)
        # Committing an unbalanced transaction makes GnuCash book the rest to Imbalance-EUR;
        # with trading accounts, GnuCash adds the trading splits of a currency exchange.
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


def read():
    session = Session(f"sqlite3://{path}", SessionOpenMode.SESSION_READ_ONLY)
    root = session.book.get_root_account()
    view = []
    for account in root.get_descendants():
        for split in account.GetSplitList():
            tx = split.parent
            other = split.GetOtherSplit()
            amount = split.GetAmount()
            view.append(
                {
                    "guid": split.GetGUID().to_string(),
                    "account": account.GetName(),
                    "type": TYPE_NAMES.get(account.GetType(), str(account.GetType())),
                    "commodity": account.GetCommodity().get_mnemonic(),
                    "topLevel": account.get_parent().GetType() == c.ACCT_TYPE_ROOT,
                    "void": split.GetReconcile() == "v",
                    # GnuCash's own local time of the posted date (gnc_localtime_r).
                    "date": tx.GetDate().strftime("%Y-%m-%d"),
                    "amountNum": amount.num(),
                    "amountDenom": amount.denom(),
                    "description": tx.GetDescription(),
                    "other": None
                    if other is None
                    else {
                        "account": other.GetAccount().GetName(),
                        "type": TYPE_NAMES.get(other.GetAccount().GetType(), "?"),
                        "topLevel": other.GetAccount().get_parent().GetType() == c.ACCT_TYPE_ROOT,
                    },
                }
            )
    session.end()
    session.destroy()
    json.dump(view, sys.stdout)


if mode == "write":
    write(json.load(sys.stdin))
elif mode == "read":
    read()
else:
    raise SystemExit("usage: gnucash-book.py write|read BOOK")
