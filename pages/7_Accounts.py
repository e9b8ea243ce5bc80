"""Accounts (lead only): create annotator and lead accounts, invite people, reset passwords.

Either the lead sets a first password and hands it over privately, or (password left
empty) the page makes a one-time invitation link with which the person chooses their own
password, so the lead never knows it. Passwords are stored as argon2id hashes only
(``db.accounts``). Resetting a password also signs that person out of every browser.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from db import accounts
from ui import auth
from ui.auth import require
from ui.errors import guard, message
from ui.render import md

ME = require("lead")  # the first call: gates a direct URL, the sidebar and a first visit after a restart

st.title("Accounts")
st.caption("Annotators see only the blind annotation page and their own progress; leads see every page.")


def _invite_link(account_id: int) -> str:
    token = accounts.issue_invite(account_id, auth.server_key())
    try:
        base = str(st.context.url or "").split("?")[0].rsplit("/Accounts", 1)[0].rstrip("/")
    except Exception:  # noqa: BLE001 - no browser context
        base = ""
    return f"{base}/?invite={token}"


def _create() -> None:
    s = st.session_state
    try:
        name, pw, role = s.get("acc_name", ""), s.get("acc_password", ""), s.get("acc_role", "annotator")
        if pw:
            info = accounts.create_account(name, pw, role)
            s["acc_msg"] = f"Created {info.role} account **{md(info.name)}**. Give them the password privately."
        else:
            info = accounts.create_invited(name, role)
            s["acc_msg"] = f"Created {info.role} account **{md(info.name)}**. Send them this one-time link:"
            s["acc_link"] = _invite_link(info.id)
        s["acc_name"] = ""
    except Exception as exc:  # noqa: BLE001 - shown with st.error, never a traceback
        s["acc_err"] = message(exc)
    s["acc_password"] = ""


def _reset() -> None:
    s = st.session_state
    try:
        name, pw = s.get("acc_reset_name", ""), s.get("acc_reset_password", "")
        if pw:
            info = accounts.set_password(name, pw)
            s["acc_msg"] = f"New password set for **{md(info.name)}**; they are signed out everywhere."
        else:
            info = accounts.clear_password(name)
            s["acc_msg"] = (f"**{md(info.name)}** is signed out everywhere and chooses a new password with this "
                            "one-time link:")
            s["acc_link"] = _invite_link(info.id)
    except Exception as exc:  # noqa: BLE001
        s["acc_err"] = message(exc)
    s["acc_reset_password"] = ""


with guard():
    if "acc_err" in st.session_state:
        st.error(st.session_state.pop("acc_err"))
    if "acc_msg" in st.session_state:
        st.success(st.session_state.pop("acc_msg"))
    if "acc_link" in st.session_state:
        st.code(st.session_state.pop("acc_link"), language=None)
        st.caption(f"Valid for {accounts.INVITE_TTL_S // 86400} days and once: choosing the password uses it up.")
    rows = accounts.list_accounts()
    st.subheader(f"{len(rows)} accounts")
    st.dataframe(pd.DataFrame([{"name": a.name, "role": a.role, "can sign in": a.has_password} for a in rows]),
                 hide_index=True)
    left, right = st.columns(2)
    with left.form("acc_create_form"):
        st.markdown("**New account**")
        st.text_input("Name", key="acc_name", placeholder="e.g. Alice")
        st.text_input("First password", key="acc_password", type="password",
                      help=f"at least {accounts.MIN_PASSWORD} characters; leave empty to get an invitation link "
                           "with which they choose their own")
        st.selectbox("Role", ["annotator", "lead"], key="acc_role")
        st.form_submit_button("Create account", on_click=_create, type="primary", key="acc_create")
    with right.form("acc_reset_form"):
        st.markdown("**Reset a password**")
        st.selectbox("Account", [a.name for a in rows], key="acc_reset_name")
        st.text_input("New password", key="acc_reset_password", type="password",
                      help="leave empty to sign them out and send a one-time link to choose a new one")
        st.form_submit_button("Set password", on_click=_reset, key="acc_reset")
