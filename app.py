"""SAGE Studio entry point: ``streamlit run app.py`` opens on the embedded demo slice.

Only navigation lives here (named pages with icons and stable URLs such as
``/Inspector?turn=<turn_id>``); each page is a thin script in ``pages/`` over
``sage_core``, ``audit`` and ``db``, with UI helpers in ``ui/``.

``SAGE_ANNOTATION_ONLY=1`` serves the blind annotation page alone, so a
server handed to annotators has no page that shows reference labels or verdicts.
"""
from __future__ import annotations

import streamlit as st

from ui.session import annotation_only, keep_slice_in_url

st.set_page_config(page_title="SAGE Studio", page_icon=":material/fact_check:", layout="wide")

PAGES = [
    st.Page("pages/0_Home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/1_Inspector.py", title="Inspector", icon=":material/search:", url_path="Inspector"),
    st.Page("pages/2_Blind_annotation.py", title="Blind annotation", icon=":material/edit_note:",
            url_path="Blind_annotation"),
    st.Page("pages/3_Agreement.py", title="Agreement", icon=":material/group:", url_path="Agreement"),
    st.Page("pages/4_Risk_coverage.py", title="Risk-coverage", icon=":material/show_chart:",
            url_path="Risk_coverage"),
    st.Page("pages/5_Dialogues.py", title="Dialogues", icon=":material/forum:", url_path="Dialogues"),
    st.Page("pages/6_Adjudication.py", title="Adjudication", icon=":material/gavel:", url_path="Adjudication"),
]

if annotation_only():
    PAGES = [st.Page("pages/2_Blind_annotation.py", title="Blind annotation", icon=":material/edit_note:",
                     url_path="Blind_annotation", default=True)]
else:
    keep_slice_in_url()  # a refresh or a copied URL keeps the loaded slice

st.navigation(PAGES).run()
