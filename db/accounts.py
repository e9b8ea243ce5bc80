"""Accounts, passwords and signed session tokens for the audit app (no streamlit here).

* A **lead** runs audits and creates the annotator accounts; an **annotator** labels.
  The first lead is made by ``python -m audit create-lead --name N``; leads create the
  other accounts on the Accounts page, either with a first password (``create_account``)
  or as an invitation (``create_invited`` + ``issue_invite``): a one-time signed link with
  which the person chooses their own password (``redeem_invite``), so the lead never knows it.
* Passwords are hashed with argon2id (``argon2-cffi``, a maintained binding of the
  reference implementation; its ``PasswordHasher`` picks safe parameters and salts).
  ``authenticate`` gives the same answer, after the same work, for an unknown name and a
  wrong password, so the sign-in form does not tell which names exist.
* Names are normalised (``db.repository.normalise_name``): " Bob " is Bob and cannot
  become a second person or sign in as Bob without Bob's password.
* Session tokens are ``<account id>.<session version>.<expiry>.<HMAC-SHA256>`` signed with a
  server secret: ``SAGE_SESSION_SECRET`` when the app's entry point passes it in, otherwise
  one generated with ``secrets`` and kept in the database (``ServerSecret``), so every app
  process on the same database agrees and a restart keeps people signed in.
  ``verify_token`` checks signature (constant time), expiry, that the account still exists
  and its ``session_version``; ``sign_out`` bumps the version, revoking every earlier token.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Optional

from sqlmodel import Session, select

from .models import ROLES, Annotator, ServerSecret
from .repository import AuditError, normalise_name
from .session import DB, read_session, run_write

MIN_PASSWORD = 8
DEFAULT_TTL_S = 12 * 3600  # a working day; then sign in again
SECRET_NAME = "session-hmac"


class AuthError(AuditError):
    """Sign-in refused (the message never says whether the name exists)."""


@dataclass(frozen=True)
class AccountInfo:
    id: int
    name: str
    role: str
    has_password: bool


def _hasher():
    from argon2 import PasswordHasher
    return PasswordHasher()


_DUMMY: list[str] = []  # a hash to verify against when the name is unknown (same work, same answer)


def _dummy_hash() -> str:
    if not _DUMMY:
        _DUMMY.append(_hasher().hash(secrets.token_hex(16)))
    return _DUMMY[0]


def _info(a: Annotator) -> AccountInfo:
    return AccountInfo(a.id, a.name, a.role or "annotator", bool(a.password_hash))


def check_password(password: str) -> str:
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise AuditError(f"a password has at least {MIN_PASSWORD} characters", field="password")
    if len(password) > 1024:
        raise AuditError("a password has at most 1024 characters", field="password")
    return password


def create_account(name: str, password: str, role: str = "annotator", db: DB = None) -> AccountInfo:
    """A new account with an argon2id password hash; refuses a name already taken (after normalising)."""
    return _new_account(name, role, _hasher().hash(check_password(password)), db)


def _new_account(name: str, role: str, digest: Optional[str], db: DB) -> AccountInfo:
    """Insert an account (``digest`` None: invited, no password yet); refuses a taken name (after normalising)."""
    if role not in ROLES:
        raise AuditError(f"role must be one of {', '.join(ROLES)}", field="role")
    display, key = normalise_name(name)

    def _fn(s: Session) -> AccountInfo:
        row = s.exec(select(Annotator).where(Annotator.name_key == key)).first()
        if row is None:
            row = s.exec(select(Annotator).where(Annotator.name == display)).first()
        if row is not None:
            raise AuditError(f"an account named '{row.name}' already exists", field="name")
        row = Annotator(name=display, name_key=key, role=role, password_hash=digest)
        s.add(row)
        s.flush()
        return _info(row)
    return run_write(db, _fn)


def set_password(name: str, password: str, db: DB = None) -> AccountInfo:
    """Set (or reset) an account's password; also signs it out everywhere."""
    return _replace_password(name, _hasher().hash(check_password(password)), db)


def _replace_password(name: str, digest: Optional[str], db: DB) -> AccountInfo:
    """Store ``digest`` (None: no password) and bump the session version, which signs the account out everywhere."""
    _, key = normalise_name(name)

    def _fn(s: Session) -> AccountInfo:
        row = s.exec(select(Annotator).where(Annotator.name_key == key)).first()
        if row is None:
            raise AuditError(f"no account named '{name.strip()}'", field="name")
        row.password_hash = digest
        row.session_version = (row.session_version or 0) + 1
        s.add(row)
        s.flush()
        return _info(row)
    return run_write(db, _fn)


def authenticate(name: str, password: str, db: DB = None) -> AccountInfo:
    """The account for ``name`` if ``password`` matches; ``AuthError`` otherwise (same message either way)."""
    from argon2.exceptions import InvalidHashError, VerificationError

    refused = AuthError("wrong name or password")
    try:
        _, key = normalise_name(name)
    except AuditError:
        raise refused from None
    with read_session(db) as s:
        row = s.exec(select(Annotator).where(Annotator.name_key == key)).first()
        info = _info(row) if row is not None else None
        digest = row.password_hash if row is not None else None
    try:
        _hasher().verify(digest or _dummy_hash(), password or "")
    except (VerificationError, InvalidHashError):
        raise refused from None
    if info is None or not digest:
        raise refused
    return info


def list_accounts(db: DB = None) -> list[AccountInfo]:
    with read_session(db) as s:
        return [_info(a) for a in s.exec(select(Annotator).order_by(Annotator.name)).all()]


def get_account(account_id: int, db: DB = None) -> Optional[AccountInfo]:
    with read_session(db) as s:
        a = s.get(Annotator, account_id)
        return _info(a) if a is not None else None


def count_leads(db: DB = None) -> int:
    with read_session(db) as s:
        return len(s.exec(select(Annotator.id).where(Annotator.role == "lead",
                                                     Annotator.password_hash.is_not(None))).all())


# ------------------------------------------------------------ session tokens
def server_secret(configured: Optional[str] = None, db: DB = None) -> bytes:
    """The HMAC key: ``configured`` (the entry point's ``SAGE_SESSION_SECRET``) or one kept in the database."""
    if configured:
        if len(configured) < 16:
            raise AuditError("SAGE_SESSION_SECRET must have at least 16 characters")
        return configured.encode("utf-8")
    with read_session(db) as s:
        row = s.get(ServerSecret, SECRET_NAME)
        if row is not None:
            return row.value.encode("ascii")

    def _fn(s: Session) -> str:
        row = s.get(ServerSecret, SECRET_NAME)
        if row is None:  # two processes at once: the loser's INSERT collides and re-reads
            row = ServerSecret(name=SECRET_NAME, value=secrets.token_urlsafe(48))
            s.add(row)
            s.flush()
        return row.value
    return run_write(db, _fn).encode("ascii")


def _sign(secret: bytes, body: str) -> str:
    mac = hmac.new(secret, body.encode("ascii"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def issue_token(account_id: int, secret: bytes, ttl_s: int = DEFAULT_TTL_S, db: DB = None,
                now: Optional[float] = None) -> str:
    """A signed token naming the account and its current session version, valid ``ttl_s`` seconds."""
    with read_session(db) as s:
        a = s.get(Annotator, account_id)
        if a is None:
            raise AuditError("no such account")
        version = a.session_version or 0
    expires = int((now if now is not None else time.time()) + ttl_s)
    body = f"{int(account_id)}.{int(version)}.{expires}"
    return f"{body}.{_sign(secret, body)}"


def verify_token(token: Optional[str], secret: bytes, db: DB = None,
                 now: Optional[float] = None) -> Optional[AccountInfo]:
    """The account a valid, unexpired, unrevoked token names; None for anything else."""
    if not token or not isinstance(token, str) or len(token) > 200:
        return None
    parts = token.split(".")
    if len(parts) != 4 or not all(p.isdigit() for p in parts[:3]):
        return None
    body = ".".join(parts[:3])
    if not hmac.compare_digest(_sign(secret, body), parts[3]):
        return None
    account_id, version, expires = (int(p) for p in parts[:3])
    if expires < (now if now is not None else time.time()):
        return None
    with read_session(db) as s:
        a = s.get(Annotator, account_id)
        if a is None or not a.password_hash or (a.session_version or 0) != version:
            return None
        return _info(a)


# ---------------------------------------------------------------- invitations
INVITE_TTL_S = 7 * 24 * 3600


def create_invited(name: str, role: str = "annotator", db: DB = None) -> AccountInfo:
    """An account without a password yet: its owner chooses one through an invitation link."""
    return _new_account(name, role, None, db)


def clear_password(name: str, db: DB = None) -> AccountInfo:
    """Remove an account's password (it is signed out everywhere); a new invitation then lets its owner choose one."""
    return _replace_password(name, None, db)


def issue_invite(account_id: int, secret: bytes, ttl_s: int = INVITE_TTL_S, db: DB = None,
                 now: Optional[float] = None) -> str:
    """A one-time invitation token for an account that has no password yet (the lead never learns it).

    Signed like a session token but with its own prefix, and bound to the account's
    ``session_version``: choosing the password bumps it, so the link works once.
    """
    with read_session(db) as s:
        a = s.get(Annotator, account_id)
        if a is None:
            raise AuditError("no such account")
        if a.password_hash:
            raise AuditError(f"'{a.name}' already has a password: reset it instead", field="name")
        version = a.session_version or 0
    expires = int((now if now is not None else time.time()) + ttl_s)
    body = f"{int(account_id)}.{int(version)}.{expires}"
    return f"i{body}.{_sign(secret, 'invite:' + body)}"


def _invite_claims(token: str, secret: bytes, now: Optional[float]) -> Optional[tuple[int, int]]:
    """(account id, session version) of an authentic, unexpired invitation token; None otherwise."""
    if not token or not isinstance(token, str) or len(token) > 200 or not token.startswith("i"):
        return None
    parts = token[1:].split(".")
    if len(parts) != 4 or not all(p.isdigit() for p in parts[:3]):
        return None
    body = ".".join(parts[:3])
    if not hmac.compare_digest(_sign(secret, "invite:" + body), parts[3]):
        return None
    account_id, version, expires = (int(p) for p in parts[:3])
    if expires < (now if now is not None else time.time()):
        return None
    return account_id, version


def _invite_account(s: Session, token: str, secret: bytes, now: Optional[float]) -> Optional[Annotator]:
    claims = _invite_claims(token, secret, now)
    if claims is None:
        return None
    a = s.get(Annotator, claims[0])
    if a is None or a.password_hash or (a.session_version or 0) != claims[1]:
        return None
    return a


def invite_name(token: str, secret: bytes, db: DB = None, now: Optional[float] = None) -> Optional[str]:
    """The account name a valid, unused invitation is for (to greet its owner); None otherwise."""
    with read_session(db) as s:
        a = _invite_account(s, token, secret, now)
        return a.name if a is not None else None


def just_redeemed_name(token: str, secret: bytes, db: DB = None, now: Optional[float] = None) -> Optional[str]:
    """The account name of an authentic, unexpired invitation whose password was chosen with it and not changed
    since (nor the account signed out): what a second delivery of the same invitation form meets. None otherwise.
    It proves nothing by itself: the caller still checks the password, as a sign-in does."""
    claims = _invite_claims(token, secret, now)
    if claims is None:
        return None
    with read_session(db) as s:
        a = s.get(Annotator, claims[0])
        if a is None or not a.password_hash or (a.session_version or 0) != claims[1] + 1:
            return None
        return a.name


def redeem_invite(token: str, password: str, secret: bytes, db: DB = None,
                  now: Optional[float] = None) -> AccountInfo:
    """Set the invited account's password (once); ``AuthError`` for an invalid, used or expired link."""
    digest = _hasher().hash(check_password(password))

    def _fn(s: Session) -> AccountInfo:
        a = _invite_account(s, token, secret, now)
        if a is None:
            raise AuthError("this invitation link is invalid, expired or already used; ask your lead for a new one")
        a.password_hash = digest
        a.session_version = (a.session_version or 0) + 1
        s.add(a)
        s.flush()
        return _info(a)
    return run_write(db, _fn)


def sign_out(account_id: int, db: DB = None) -> None:
    """Revoke every session token of the account (all its browsers)."""
    def _fn(s: Session) -> None:
        a = s.get(Annotator, account_id)
        if a is not None:
            a.session_version = (a.session_version or 0) + 1
            s.add(a)
    run_write(db, _fn)


__all__ = ["AccountInfo", "AuthError", "create_account", "set_password", "authenticate", "list_accounts",
           "get_account", "count_leads", "server_secret", "issue_token", "verify_token", "sign_out",
           "MIN_PASSWORD", "DEFAULT_TTL_S", "create_invited", "issue_invite", "invite_name", "redeem_invite",
           "just_redeemed_name",
           "INVITE_TTL_S", "clear_password"]
