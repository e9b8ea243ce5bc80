"""Accounts (lead only): create annotator and lead accounts, reset passwords.

The lead gives each annotator their name and first password by a private channel;
passwords are stored as argon2id hashes only (``db.accounts``). Resetting a password
also signs that person out of every browser.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from db import accounts
from ui.auth import require
from ui.errors import guard, message
from ui.render import md

ME = require("lead")  # the first call: gates a direct URL, the sidebar and a first visit after a restart

st.title("Accounts")
st.caption("Annotators see only the blind annotation page and their own progress; leads see every page.")


def _create() -> None:
    s = st.session_state
    try:
        info = accounts.create_account(s.get("acc_name", ""), s.get("acc_password", ""), s.get("acc_role", "annotator"))
        s["acc_msg"] = f"Created {info.role} account **{md(info.name)}**. Give them the password privately."
        s["acc_name"] = ""
    except Exception as exc:  # noqa: BLE001 - shown with st.error, never a traceback
        s["acc_err"] = message(exc)
    s["acc_password"] = ""


def _reset() -> None:
    s = st.session_state
    try:
        info = accounts.set_password(s.get("acc_reset_name", ""), s.get("acc_reset_password", ""))
        s["acc_msg"] = f"New password set for **{md(info.name)}**; they are signed out everywhere."
    except Exception as exc:  # noqa: BLE001
        s["acc_err"] = message(exc)
    s["acc_reset_password"] = ""


with guard():
    if "acc_err" in st.session_state:
        st.error(st.session_state.pop("acc_err"))
    if "acc_msg" in st.session_state:
        st.success(st.session_state.pop("acc_msg"))
    rows = accounts.list_accounts()
    st.subheader(f"{len(rows)} accounts")
    st.dataframe(pd.DataFrame([{"name": a.name, "role": a.role, "can sign in": a.has_password} for a in rows]),
                 hide_index=True)
    left, right = st.columns(2)
    with left.form("acc_create_form"):
        st.markdown("**New account**")
        st.text_input("Name", key="acc_name", placeholder="e.g. Alice")
        st.text_input("First password", key="acc_password", type="password",
                      help=f"at least {accounts.MIN_PASSWORD} characters")
        st.selectbox("Role", ["annotator", "lead"], key="acc_role")
        st.form_submit_button("Create account", on_click=_create, type="primary", key="acc_create")
    with right.form("acc_reset_form"):
        st.markdown("**Reset a password**")
        st.selectbox("Account", [a.name for a in rows], key="acc_reset_name")
        st.text_input("New password", key="acc_reset_password", type="password")
        st.form_submit_button("Set password", on_click=_reset, key="acc_reset")
