"""SAGE Studio entry point: ``streamlit run app.py`` opens on the embedded demo slice.

Only navigation lives here (named pages with icons and stable URLs such as
``/Inspector?turn=<turn_id>``); each page is a thin script in ``pages/`` over
``sage_core``, ``audit`` and ``db``, with UI helpers in ``ui/``.

Who sees which page: the navigation lists the pages of the signed-in person's role
(an annotator: Blind annotation only; a lead: every page and Accounts; nobody signed
in: the pages are registered but hidden, and each one asks for a sign-in). The
navigation is only what people see: every page script also calls ``ui.auth.require``
first, which is what actually gates it (see ``ui/auth.py`` for why).

``SAGE_ANNOTATION_ONLY=1`` serves the blind annotation page alone, to everyone, so a
server handed to annotators has no page that shows reference labels or verdicts.
"""
from __future__ import annotations

import streamlit as st

from ui.auth import current_user
from ui.session import annotation_only, keep_slice_in_url

st.set_page_config(page_title="SAGE Studio", page_icon=":material/fact_check:", layout="wide")

ANNOTATE = dict(title="Blind annotation", icon=":material/edit_note:", url_path="Blind_annotation")
PAGES = [
    st.Page("pages/0_Home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/1_Inspector.py", title="Inspector", icon=":material/search:", url_path="Inspector"),
    st.Page("pages/2_Blind_annotation.py", **ANNOTATE),
    st.Page("pages/3_Agreement.py", title="Agreement", icon=":material/group:", url_path="Agreement"),
    st.Page("pages/4_Risk_coverage.py", title="Risk-coverage", icon=":material/show_chart:",
            url_path="Risk_coverage"),
    st.Page("pages/5_Dialogues.py", title="Dialogues", icon=":material/forum:", url_path="Dialogues"),
    st.Page("pages/6_Adjudication.py", title="Adjudication", icon=":material/gavel:", url_path="Adjudication"),
    st.Page("pages/7_Accounts.py", title="Accounts", icon=":material/manage_accounts:", url_path="Accounts"),
]


def _to_annotation() -> None:
    invite = st.query_params.get("invite")  # an invitation link keeps its token
    st.switch_page("pages/2_Blind_annotation.py", query_params={"invite": invite} if invite else None)


me = current_user()
position = "sidebar"
if annotation_only() or (me is not None and not me.is_lead):
    # "/" forwards to /Blind_annotation, which keeps its own URL (a bookmarked link still works);
    # any other URL is "page not found" for this person
    PAGES = [st.Page(_to_annotation, title="Start", url_path="start", default=True, visibility="hidden"),
             st.Page("pages/2_Blind_annotation.py", **ANNOTATE)]
elif me is None:
    position = "hidden"  # each page shows the sign-in form; page names are not advertised
if me is not None and me.is_lead and not annotation_only():
    keep_slice_in_url()  # a refresh or a copied URL keeps the loaded slice (bound to this lead)

st.navigation(PAGES, position=position).run()
