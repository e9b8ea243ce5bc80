"""Streamlit UI helpers shared by ``app.py`` and the pages.

Pages stay thin: evaluation, statistics and storage live in ``sage_core``,
``audit`` and ``db``; this package only loads inputs, caches runs per session
and renders HTML fragments. (Not under ``pages/``: Streamlit would list every
module there as a page.)
"""
