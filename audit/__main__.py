"""``python -m audit create-lead --name N``: the first audit lead of a server (an entry point).

The password comes from ``SAGE_LEAD_PASSWORD`` when set (scripts, containers), otherwise
from an interactive prompt (asked twice, never echoed). The database is ``--db`` or the
settings' ``SAGE_DATABASE_URL``. The lead then creates annotator accounts in the app
(Accounts page). ``set-password --name N`` resets any account's password the same way.
Errors print ``error: ...`` on stderr and exit 2.
"""
from __future__ import annotations

import argparse
import getpass
import os
import sys


def _password(prompt_name: str) -> str:
    env = os.environ.get("SAGE_LEAD_PASSWORD")
    if env:
        return env
    if not sys.stdin.isatty():
        raise SystemExit("error: no terminal to ask for the password: set SAGE_LEAD_PASSWORD")
    first = getpass.getpass(f"Password for {prompt_name}: ")
    if getpass.getpass("Repeat the password: ") != first:
        raise SystemExit("error: the passwords differ")
    return first


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m audit", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for cmd, helptext in (("create-lead", "create an audit lead account"),
                          ("set-password", "reset the password of an account (signs it out everywhere)")):
        p = sub.add_parser(cmd, help=helptext)
        p.add_argument("--name", required=True)
        p.add_argument("--db", default=None, help="database URL (default: SAGE_DATABASE_URL / settings)")
    args = ap.parse_args(argv)

    from db import accounts
    from sage_core import SageInputError
    try:
        pw = _password(args.name.strip())
        if args.command == "create-lead":
            info = accounts.create_account(args.name, pw, role="lead", db=args.db)
            print(f"created lead '{info.name}'")
        else:
            info = accounts.set_password(args.name, pw, db=args.db)
            print(f"password of '{info.name}' set")
    except SageInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
