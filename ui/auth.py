"""Who is using the app, and what they may see: ``require(role)`` at the top of every page.

Why in every page script (and not only in ``app.py``'s ``st.navigation``): until the
entry point has run ``st.navigation`` once, Streamlit serves the ``pages/`` folder on its
own (its v1 multipage mode), so on a freshly started server ``/Agreement`` runs
``pages/3_Agreement.py`` without ``app.py`` ever running. A gate that lives in the page
itself holds for a direct URL, the sidebar, a query parameter and the first visit after a
restart alike. ``tests/test_app_roles.py`` checks that every file in ``pages/`` calls it
first.

* ``require("annotator")``: any signed-in account (the annotation page).
* ``require("lead")``: the lead role (Home/loading, Inspector, Agreement, Dialogues,
  Risk-coverage, Accounts, exports). On a ``SAGE_ANNOTATION_ONLY=1`` server no lead page is
  served at all, to anyone.

Sessions. Sign-in checks the password (``db.accounts``, argon2id) and then keeps the
person signed in across reloads with a signed, expiring token (HMAC-SHA256 with
``SAGE_SESSION_SECRET``, or a secret generated once and kept in the database). The token
lives in a cookie, not in the URL: a URL is copied into chat messages, screenshots,
browser history and ``Referer`` headers, and whoever holds the link would be signed in as
that person; a cookie (``SameSite=Strict``, ``Secure`` over https) stays in the browser
that signed in. Streamlit reads cookies (``st.context.cookies``) but cannot set them, so
a three-line script through ``st.html(..., unsafe_allow_javascript=True)`` sets and clears
it; the script contains only the token (base64url, digits and dots), never user text.
Signing out bumps the account's session version, which revokes every token issued before.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import streamlit as st

from db import accounts

from .errors import message
from .render import md
from .session import annotation_only

KEY = "sage_identity"
COOKIE = "sage_session"
_PENDING = "sage_auth_cookie"  # token to write into the cookie on the next render ("" = clear it)
ROLE_LABEL = {"lead": "audit lead", "annotator": "annotator"}


@dataclass(frozen=True)
class Identity:
    """The signed-in account (set only after a password check or a valid session token)."""

    id: int
    name: str
    role: str

    @property
    def is_lead(self) -> bool:
        return self.role == "lead"


def session_ttl_s() -> int:
    try:
        return max(60, int(os.environ.get("SAGE_SESSION_TTL_S", accounts.DEFAULT_TTL_S)))
    except ValueError:
        return accounts.DEFAULT_TTL_S


@st.cache_resource(show_spinner=False)
def _secret_for(db_url: str) -> bytes:
    return accounts.server_secret(os.environ.get("SAGE_SESSION_SECRET") or None)


def _secret() -> bytes:
    from sage_core import get_settings
    return _secret_for(get_settings().database_url)


def server_key() -> bytes:
    """The HMAC key of session tokens and invitations (``SAGE_SESSION_SECRET`` or the database's)."""
    return _secret()


def _cookie_token() -> Optional[str]:
    try:
        return st.context.cookies.get(COOKIE)
    except Exception:  # noqa: BLE001 - no browser context (AppTest, plain Python)
        return None


def current_user() -> Optional[Identity]:
    """The signed-in person of this browser session, from the session or its cookie; None if nobody."""
    ident = st.session_state.get(KEY)
    if isinstance(ident, Identity):
        return ident
    if st.session_state.get(_PENDING) == "":  # signed out in this session: ignore the stale cookie
        return None
    token = _cookie_token()
    if not token:
        return None
    try:
        info = accounts.verify_token(token, _secret())
    except Exception:  # noqa: BLE001 - an unreadable database means "not signed in", shown by the page
        return None
    if info is None:
        return None
    ident = Identity(info.id, info.name, info.role)
    st.session_state[KEY] = ident
    return ident


MAX_FAILURES = 5  # wrong passwords in a row for one name before sign-in pauses for it
LOCK_S = 60


@st.cache_resource(show_spinner=False)
def _failures() -> dict:
    """Process-wide: normalised name -> (wrong passwords in a row, refuse until). Same for unknown names."""
    return {}


def _throttled(key: str) -> bool:
    import time
    n, until = _failures().get(key, (0, 0.0))
    return n >= MAX_FAILURES and time.time() < until


def _count_failure(key: str) -> None:
    import time
    n, _ = _failures().get(key, (0, 0.0))
    _failures()[key] = (n + 1, time.time() + LOCK_S)


def _do_sign_in() -> None:
    s = st.session_state
    name, password = s.get("auth_name", ""), s.get("auth_password", "")
    s["auth_password"] = ""  # never kept in the session
    _sign_in_with(name, password)


def _sign_in_with(name: str, password: str) -> None:
    """Check name + password (throttled per name) and sign this session in; the reason in ``auth_error`` if not."""
    s = st.session_state
    key = " ".join(str(name or "").split()).casefold()
    if _throttled(key):
        s["auth_error"] = (f"Too many wrong passwords for this name: wait {LOCK_S} seconds, or ask your lead "
                           "to reset the password.")
        return
    try:
        try:
            info = accounts.authenticate(name, password)
        except accounts.AuthError:
            _count_failure(key)
            raise
        _failures().pop(key, None)
        token = accounts.issue_token(info.id, _secret(), ttl_s=session_ttl_s())
        s[KEY] = Identity(info.id, info.name, info.role)  # only once everything succeeded
        s[_PENDING] = token
        s.pop("auth_error", None)
    except Exception as exc:  # noqa: BLE001 - shown with st.error, never a traceback
        s["auth_error"] = message(exc) if not isinstance(exc, accounts.AuthError) else str(exc).capitalize()


def sign_out() -> None:
    """Sign this person out everywhere (revokes their tokens) and clear the cookie."""
    ident = st.session_state.pop(KEY, None)
    if isinstance(ident, Identity):
        try:
            accounts.sign_out(ident.id)
        except Exception:  # noqa: BLE001 - the session is cleared either way
            pass
    for k in [k for k in st.session_state if str(k).startswith(("ann_", "sage_slice"))]:
        st.session_state.pop(k, None)
    st.session_state[_PENDING] = ""


def _write_cookie() -> None:
    """Emit the cookie script once after a sign-in or sign-out (token charset: [0-9A-Za-z._-])."""
    token = st.session_state.get(_PENDING)
    if token is None:
        return
    if token and not all(c.isalnum() or c in "._-" for c in token):
        return
    if token:
        st.session_state.pop(_PENDING)
        value, age = token, session_ttl_s()
    else:
        value, age = "", 0
    st.html(f"""<script>
document.cookie = "{COOKIE}={value}; Path=/; Max-Age={age}; SameSite=Strict"
  + (location.protocol === "https:" ? "; Secure" : "");
</script>""", unsafe_allow_javascript=True)


def _invite_token() -> Optional[str]:
    try:
        return st.query_params.get("invite")
    except Exception:  # noqa: BLE001
        return None


def _do_redeem() -> None:
    s = st.session_state
    token, password, again = _invite_token(), s.get("inv_password", ""), s.get("inv_password2", "")
    s["inv_password"] = s["inv_password2"] = ""
    try:
        if password != again:
            raise accounts.AuditError("the two passwords differ", field="password")
        try:
            info = accounts.redeem_invite(token or "", password, _secret())
        except accounts.AuthError as used:
            # A real browser can deliver this form twice into overlapping runs (as the first-lead form, below):
            # the second meets the link the first has just used. The same password then signs in, throttled as
            # the sign-in form is; anything else keeps the "already used" error.
            name = accounts.just_redeemed_name(token or "", _secret())
            if name is None or not password:
                raise
            _sign_in_with(name, password)
            if KEY not in s:
                raise used from None
            st.query_params.pop("invite", None)
            return
        s[_PENDING] = accounts.issue_token(info.id, _secret(), ttl_s=session_ttl_s())
        s[KEY] = Identity(info.id, info.name, info.role)
        st.query_params.pop("invite", None)
    except Exception as exc:  # noqa: BLE001 - shown with st.error, never a traceback
        s["auth_error"] = message(exc) if not isinstance(exc, accounts.AuthError) else str(exc).capitalize()


def invite_form(token: str) -> None:
    """An invitation link (``?invite=``): its owner chooses a password and is signed in; stops the page.

    The token is one-time (choosing the password invalidates it) and expires after a week;
    it is the only credential ever put into a URL, and only until it is used.
    """
    _write_cookie()
    st.title("Welcome to SAGE Studio")
    if "auth_error" in st.session_state:
        st.error(st.session_state.pop("auth_error"))
    try:
        name = accounts.invite_name(token, _secret())
    except Exception:  # noqa: BLE001
        name = None
    if name is None:
        st.error("This invitation link is invalid, expired or already used; ask your lead for a new one.")
        st.stop()
    st.markdown(f"Choose the password for **{md(name)}** (at least {accounts.MIN_PASSWORD} characters). "
                "Nobody else will know it, your lead included.")
    with st.form("inv_form"):
        st.text_input("Password", key="inv_password", type="password")
        st.text_input("Repeat the password", key="inv_password2", type="password")
        st.form_submit_button("Set password and sign in", type="primary", on_click=_do_redeem, key="inv_submit")
    st.stop()


def is_loopback(ip: object) -> bool:
    """Streamlit gives None for 127.0.0.1 / ::1 but the text of an IPv4-mapped loopback
    (``::ffff:127.0.0.1``, how Chromium often connects); AppTest gives a mock (no connection)."""
    import ipaddress

    if not isinstance(ip, str):
        return True
    try:
        addr = ipaddress.ip_address(ip.split("%")[0])
    except ValueError:
        return False
    mapped = getattr(addr, "ipv4_mapped", None)
    return (mapped or addr).is_loopback


def first_run_allowed() -> bool:
    """The first-lead form: only while the database has no lead with a password, only on a server
    that is not annotation-only, and only to a browser on this machine (loopback connection).

    So ``streamlit run app.py`` on a fresh machine opens on the demo after one form, while a
    shared server is set up with ``python -m audit create-lead`` before anyone else can reach it
    (behind a reverse proxy on the same host every connection looks local: create the lead first).
    """
    if annotation_only():
        return False
    try:
        if not is_loopback(st.context.ip_address):
            return False
        return accounts.count_leads() == 0
    except Exception:  # noqa: BLE001 - an unreachable database: no first-run form, the sign-in form says why
        return False


def _do_first_lead() -> None:
    s = st.session_state
    name, password, again = s.get("first_name", ""), s.get("first_password", ""), s.get("first_password2", "")
    s["first_password"] = s["first_password2"] = ""
    try:
        if password != again:
            raise accounts.AuditError("the two passwords differ", field="password")
        if first_run_allowed():
            try:
                info = accounts.create_account(name, password, role="lead")
            except accounts.AuditError:
                if not accounts.count_leads():
                    raise  # the name or password itself (too short, ...)
                info = None  # a lead was created meanwhile: this very form, delivered twice (below)
            if info is not None:
                s[_PENDING] = accounts.issue_token(info.id, _secret(), ttl_s=session_ttl_s())
                s[KEY] = Identity(info.id, info.name, info.role)
                return
        # A lead exists. A real browser can deliver this form's submission twice, into two overlapping script runs
        # (seen in Chromium: the second run found the lead the first had just created and showed "already exists"
        # over the sign-in form). So the same name and password sign in, as the sign-in form would; anything else
        # is told to sign in.
        if accounts.count_leads() and password:
            _sign_in_with(name, password)
            if KEY in s:
                return
        raise accounts.AuditError("a lead exists already: sign in", field="name")
    except Exception as exc:  # noqa: BLE001 - shown with st.error, never a traceback
        s["auth_error"] = message(exc)


def first_lead_form() -> None:
    """First run on this machine: create the audit lead (then the demo slice opens); stops the page."""
    st.title("Welcome to SAGE Studio")
    if "auth_error" in st.session_state:
        st.error(st.session_state.pop("auth_error"))
    st.markdown("No account exists yet. Create the **audit lead** (you): the lead loads slices, runs "
                f"evaluators, creates audits and annotator accounts. Password: at least {accounts.MIN_PASSWORD} "
                "characters, stored as an argon2id hash only.")
    with st.form("first_form"):
        st.text_input("Name", key="first_name")
        st.text_input("Password", key="first_password", type="password")
        st.text_input("Repeat the password", key="first_password2", type="password")
        st.form_submit_button("Create the lead and sign in", type="primary", on_click=_do_first_lead,
                              key="first_submit")
    st.caption("Shown only to a browser on this machine while no lead exists; on a shared server run "
               "`python -m audit create-lead --name NAME` first.")
    st.stop()


def sign_in_form() -> None:
    """Name + password (or, on a fresh local install, the first-lead form); stops the page."""
    _write_cookie()
    token = _invite_token()
    if token:
        invite_form(token)
    if first_run_allowed():
        first_lead_form()
    st.title("Sign in to SAGE Studio")
    if "auth_error" in st.session_state:
        st.error(st.session_state.pop("auth_error"))
    with st.form("auth_form"):
        st.text_input("Name", key="auth_name")
        st.text_input("Password", key="auth_password", type="password")
        st.form_submit_button("Sign in", type="primary", on_click=_do_sign_in, key="auth_sign_in")
    st.caption("Accounts are created by the audit lead (Accounts page, or `python -m audit create-lead` for "
               "the first lead). Ask your lead if you have none.")
    st.stop()


def _account_box(ident: Identity) -> None:
    with st.sidebar:
        st.markdown(f"Signed in as **{md(ident.name)}** · {ROLE_LABEL.get(ident.role, ident.role)}")
        st.button("Sign out", key="auth_sign_out", on_click=sign_out)


def require(role: str = "annotator") -> Identity:
    """Gate a page: the first call of every page script. Returns the signed-in identity or stops."""
    if role not in ("lead", "annotator"):
        raise ValueError(f"unknown role {role!r}")
    if role == "lead" and annotation_only():
        st.error("This server serves the blind annotation page only.")
        st.stop()
    ident = current_user()
    if ident is None:
        sign_in_form()
    _write_cookie()
    if role == "lead" and not ident.is_lead:
        st.error("This page needs the audit lead's role. Annotators work on the Blind annotation page.")
        _account_box(ident)
        st.stop()
    _account_box(ident)
    return ident


__all__ = ["Identity", "KEY", "COOKIE", "require", "current_user", "sign_out", "sign_in_form", "invite_form",
           "first_run_allowed", "first_lead_form",
           "annotation_only", "session_ttl_s", "server_key"]
