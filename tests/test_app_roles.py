"""Accounts and roles in the app (issue 10): who may render which page, sign-in, tokens, hardening.

Every AppTest here signs in through the real form (no identity is injected: ``AUTO_LEAD = False``).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from db import accounts

AUTO_LEAD = False
REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 120
LEAD_PAGES = ["pages/0_Home.py", "pages/1_Inspector.py", "pages/3_Agreement.py", "pages/4_Risk_coverage.py",
              "pages/5_Dialogues.py", "pages/6_Adjudication.py", "pages/7_Accounts.py"]
PW = "correct horse battery"


@pytest.fixture()
def people(db_url):
    accounts.create_account("Lea", PW, role="lead", db=db_url)
    accounts.create_account("Alice", PW, db=db_url)
    accounts.create_account("Bob", PW, db=db_url)
    return db_url


def _sign_in(at: AppTest, name: str, password: str = PW) -> AppTest:
    at.text_input(key="auth_name").set_value(name)
    at.text_input(key="auth_password").set_value(password)
    at.button(key="auth_sign_in").click().run()
    assert not at.exception
    return at


def _app(page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    if page:
        at.switch_page(page)
    return at.run()


def _titles(at: AppTest) -> list[str]:
    return [t.value for t in at.title]


def _page_alone(page: str) -> AppTest:
    """The page script run on its own, as Streamlit does before app.py has run st.navigation."""
    return AppTest.from_file(str(REPO / page), default_timeout=TIMEOUT).run()


def test_every_page_calls_require_first():
    """The gate is the first statement after the imports of every page script (including future ones)."""
    pages = sorted((REPO / "pages").glob("*.py"))
    assert len(pages) >= 7
    for page in pages:
        tree = ast.parse(page.read_text())
        body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))
                and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        first = body[0]
        call = first.value if isinstance(first, (ast.Assign, ast.Expr)) else None
        assert isinstance(call, ast.Call) and getattr(call.func, "id", None) == "require", page.name
        role = call.args[0].value
        assert role == ("annotator" if page.name == "2_Blind_annotation.py" else "lead"), page.name


@pytest.mark.parametrize("page", LEAD_PAGES)
def test_nobody_signed_in_sees_only_the_sign_in_form(people, page):
    at = _page_alone(page)
    assert _titles(at) == ["Sign in to SAGE Studio"]
    assert not at.dataframe and not at.exception


@pytest.mark.parametrize("page", LEAD_PAGES)
def test_annotator_cannot_render_lead_pages(people, page):
    at = _sign_in(_page_alone(page), "alice")
    assert _titles(at) == []  # nothing of the page ran
    assert any("audit lead" in e.value for e in at.error)
    assert not at.dataframe and not at.metric and not at.button(key="auth_sign_out").disabled


@pytest.mark.parametrize("page", LEAD_PAGES)
def test_lead_renders_lead_pages(people, page):
    at = _sign_in(_page_alone(page), "lea")
    assert not at.exception and not [e for e in at.error if "audit lead" in e.value]
    assert _titles(at) and _titles(at) != ["Sign in to SAGE Studio"]


def test_annotator_signing_in_on_a_lead_page_gets_no_lead_content(people):
    """AppTest reruns page scripts the way a fresh server does (Streamlit's pages/ mode): still gated."""
    at = _sign_in(_app(), "alice")  # the default page is the lead's Home
    assert _titles(at) == [] and any("audit lead" in e.value for e in at.error)
    at.switch_page("pages/2_Blind_annotation.py").run()
    assert _titles(at) == ["Blind annotation"]
    lead = _sign_in(_app(), "lea")
    assert _titles(lead) == ["SAGE Studio"]
    lead.switch_page("pages/7_Accounts.py").run()
    assert _titles(lead) == ["Accounts"]


def test_name_is_normalised_and_the_password_is_per_person(people):
    at = _sign_in(_app("pages/2_Blind_annotation.py"), "  BOB ")
    assert any("Signed in as **Bob**" in m.value for m in at.markdown)
    wrong = _sign_in(_app("pages/2_Blind_annotation.py"), "bob", "not bobs password")
    assert _titles(wrong) == ["Sign in to SAGE Studio"]
    assert [e.value for e in wrong.error] == ["Wrong name or password"]
    nobody = _sign_in(_app("pages/2_Blind_annotation.py"), "mallory", "whatever password")
    assert [e.value for e in nobody.error] == ["Wrong name or password"]  # same answer: no name probing
    with pytest.raises(Exception, match="already exists"):
        accounts.create_account(" bob", "another password", db=people)


def test_lead_creates_an_annotator_who_can_then_sign_in(people):
    lead = _sign_in(_app(), "lea")
    lead.switch_page("pages/7_Accounts.py").run()
    lead.text_input(key="acc_name").set_value("![x](http://host/y) Carol")
    lead.text_input(key="acc_password").set_value("carols password")
    lead.button(key="acc_create").click().run()
    assert not lead.exception and not lead.error
    assert any("\\!\\[x\\]" in s.value for s in lead.success)  # the name is shown escaped
    carol = _sign_in(_app("pages/2_Blind_annotation.py"), "![x](http://host/y) carol", "carols password")
    assert _titles(carol) == ["Blind annotation"]
    shown = next(m.value for m in carol.markdown if m.value.startswith("Signed in as"))
    assert "![x](" not in shown and "\\!\\[x\\]" in shown


def test_annotation_only_server_refuses_lead_pages_even_to_the_lead(people, monkeypatch):
    monkeypatch.setenv("SAGE_ANNOTATION_ONLY", "1")
    for page in LEAD_PAGES:
        at = _page_alone(page)  # before app.py has run: Streamlit runs the page script itself
        assert _titles(at) == [] and any("annotation page only" in e.value for e in at.error), page
    at = _sign_in(_app(), "lea")
    assert _titles(at) == ["Blind annotation"]
    assert not [e for e in at.expander if "Create an audit" in e.label]


def test_session_token_round_trip_and_revocation(people):
    secret = accounts.server_secret(db=people)
    assert secret == accounts.server_secret(db=people)  # kept in the database
    alice = accounts.authenticate("Alice", PW, db=people)
    token = accounts.issue_token(alice.id, secret, ttl_s=60, db=people)
    assert accounts.verify_token(token, secret, db=people).name == "Alice"
    body, sig = token.rsplit(".", 1)
    lead = accounts.authenticate("Lea", PW, db=people)
    forged = f"{lead.id}.{body.split('.', 1)[1]}.{sig}"
    assert accounts.verify_token(forged, secret, db=people) is None  # another account id, same signature
    assert accounts.verify_token(token, b"another secret of 16+ chars", db=people) is None
    assert accounts.verify_token(token, secret, db=people, now=10**11) is None  # expired
    accounts.sign_out(alice.id, db=people)
    assert accounts.verify_token(token, secret, db=people) is None  # revoked


def test_path_loading_is_restricted_to_the_data_roots(people, tmp_path, monkeypatch):
    root = tmp_path / "data"
    root.mkdir()
    monkeypatch.setenv("SAGE_DATA_ROOTS", str(root))
    secret = tmp_path / "secret.jsonl"
    secret.write_text("{}\n")
    errors = []
    for target in (str(secret), str(tmp_path / "missing.jsonl"), str(root / ".." / "secret.jsonl")):
        at = _sign_in(_app(), "lea")
        at.radio(key="load_source").set_value("Path on disk").run()
        at.text_input(key="load_path").set_value(target)
        at.button(key="load_path_btn").click().run()
        assert not at.exception
        errors.append([e.value for e in at.error])
    assert errors[0] and errors[0] == errors[1] == errors[2]  # same words: existence is not revealed
    assert "SAGE\\_DATA\\_ROOTS" in errors[0][0] or "SAGE_DATA_ROOTS" in errors[0][0]


def test_repeated_wrong_passwords_pause_sign_in_for_that_name(people):
    from ui import auth
    auth._failures().clear()
    at = _app("pages/2_Blind_annotation.py")
    for _ in range(auth.MAX_FAILURES):
        _sign_in(at, "bob", "guess guess guess")
        assert [e.value for e in at.error] == ["Wrong name or password"]
    _sign_in(at, "bob")  # even the right password is refused for a while
    assert _titles(at) == ["Sign in to SAGE Studio"] and "Too many wrong passwords" in at.error[0].value
    alice = _sign_in(_app("pages/2_Blind_annotation.py"), "alice")  # other names are not affected
    assert _titles(alice) == ["Blind annotation"]
    auth._failures().clear()
    assert _titles(_sign_in(_app("pages/2_Blind_annotation.py"), "bob")) == ["Blind annotation"]


def test_a_slice_hash_alone_does_not_open_another_leads_slice(people):
    import json

    from ui.loading import DEMO_SCHEMA, load_demo

    accounts.create_account("Max", PW, role="lead", db=people)
    turns = load_demo().turns[:5]
    a = _sign_in(_app(), "lea")
    a.radio(key="load_source").set_value("Upload").run()
    a.file_uploader(key="load_files").set_value(
        [("private.jsonl", "".join(json.dumps(t.to_dict()) + "\n" for t in turns).encode(), "application/json")])
    a.file_uploader(key="load_schema_file").set_value(("schema.json", DEMO_SCHEMA.read_bytes(), "application/json"))
    a.run()
    a.button(key="load_upload_btn").click().run()
    assert not a.exception and not a.error
    h = a.query_params["slice"]
    h = h[0] if isinstance(h, list) else h
    assert {m.label: m.value for m in a.metric}["Turns"] == "5"

    def opened_by(name: str) -> str:
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
        at.query_params["slice"] = h
        at.run()
        _sign_in(at, name)
        at.query_params["slice"] = h  # the link again, now signed in
        at.run()
        return {m.label: m.value for m in at.metric}["Turns"]

    assert opened_by("lea") == "5"  # her own link in a new tab opens her slice
    assert opened_by("max") == str(len(load_demo().turns))  # another lead with the hash gets the demo


def test_sign_out_shows_the_form_and_revokes_the_session_token(people):
    at = _sign_in(_app("pages/2_Blind_annotation.py"), "alice")
    assert _titles(at) == ["Blind annotation"]
    alice = accounts.authenticate("alice", PW, db=people)
    token = accounts.issue_token(alice.id, accounts.server_secret(db=people), db=people)  # e.g. another browser
    at.button(key="auth_sign_out").click().run()
    assert _titles(at) == ["Sign in to SAGE Studio"] and not at.exception
    assert accounts.verify_token(token, accounts.server_secret(db=people), db=people) is None


def test_invitation_link_lets_the_annotator_choose_a_password_once(people):
    lead = _sign_in(_app(), "lea")
    lead.switch_page("pages/7_Accounts.py").run()
    lead.text_input(key="acc_name").set_value("Nina")
    lead.button(key="acc_create").click().run()  # no password: an invitation
    assert not lead.exception and not lead.error
    link = lead.code[0].value
    assert "?invite=" in link
    token = link.split("?invite=", 1)[1]
    # Nina has no password yet: nobody can sign in as her
    with pytest.raises(accounts.AuthError):
        accounts.authenticate("nina", "", db=people)

    def open_link() -> AppTest:
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
        at.query_params["invite"] = token
        at.switch_page("pages/2_Blind_annotation.py")
        return at.run()

    nina = open_link()
    assert _titles(nina) == ["Welcome to SAGE Studio"] and any("**Nina**" in m.value for m in nina.markdown)
    nina.text_input(key="inv_password").set_value("ninas own password")
    nina.text_input(key="inv_password2").set_value("ninas own password")
    nina.button(key="inv_submit").click().run()
    assert not nina.exception and _titles(nina) == ["Blind annotation"]
    assert accounts.authenticate("nina", "ninas own password", db=people).role == "annotator"
    again = open_link()  # the link is used up
    assert any("invalid, expired or already used" in e.value for e in again.error)
    assert not again.text_input  # no password form


def test_invitation_form_delivered_twice_signs_in_instead_of_failing(people):
    """The invitation form, like the first-lead form, can be delivered twice into overlapping runs: the second
    meets the link the first has just used. The same password signs in; another password, or the link after the
    account signed out, still says the link is used."""
    lead = _sign_in(_app(), "lea")
    lead.switch_page("pages/7_Accounts.py").run()
    lead.text_input(key="acc_name").set_value("Nina")
    lead.button(key="acc_create").click().run()
    token = lead.code[0].value.split("?invite=", 1)[1]

    def open_link() -> AppTest:
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
        at.query_params["invite"] = token
        at.switch_page("pages/2_Blind_annotation.py")
        return at.run()

    def submit(at: AppTest, password: str) -> AppTest:
        at.text_input(key="inv_password").set_value(password)
        at.text_input(key="inv_password2").set_value(password)
        return at.button(key="inv_submit").click().run()

    first, second, third, late = open_link(), open_link(), open_link(), open_link()  # all showing the form
    assert not submit(first, "ninas own password").exception and _titles(first) == ["Blind annotation"]
    second = submit(second, "ninas own password")  # the same submission, delivered again
    assert not second.exception and not second.error and _titles(second) == ["Blind annotation"]
    third = submit(third, "someone else's guess")
    assert any("invalid, expired or already used" in e.value for e in third.error)
    assert _titles(third) == ["Welcome to SAGE Studio"]
    nina = accounts.authenticate("nina", "ninas own password", db=people)
    accounts.sign_out(nina.id, db=people)  # signed out everywhere: the link is spent for good
    late = submit(late, "ninas own password")
    assert _titles(late) == ["Welcome to SAGE Studio"] and any("invalid, expired or already used" in e.value for e in late.error)


def test_first_run_on_this_machine_creates_the_lead_then_opens_the_demo(db_url, monkeypatch):
    """README's `streamlit run app.py` on a fresh database: one form (loopback only), then Home on the demo."""
    at = _app()
    assert _titles(at) == ["Welcome to SAGE Studio"] and not at.exception
    at.text_input(key="first_name").set_value(" Lea ")
    at.text_input(key="first_password").set_value(PW)
    at.text_input(key="first_password2").set_value(PW + "x")
    at.button(key="first_submit").click().run()
    assert "differ" in at.error[0].value and accounts.count_leads(db=db_url) == 0
    at.text_input(key="first_password").set_value(PW)
    at.text_input(key="first_password2").set_value(PW)
    at.button(key="first_submit").click().run()
    assert not at.exception and not at.error
    assert [(a.name, a.role) for a in accounts.list_accounts(db=db_url)] == [("Lea", "lead")]
    assert _titles(at) == ["SAGE Studio"] and any("Signed in as **Lea**" in m.value for m in at.markdown)
    assert any("demo slice" in c.value for c in at.caption)  # Home, on the embedded demo slice
    # once a lead exists, every new browser gets the sign-in form, never the first-run form
    again = _app()
    assert _titles(again) == ["Sign in to SAGE Studio"]
    assert _titles(_sign_in(again, "lea")) != ["Sign in to SAGE Studio"]


def test_first_run_form_delivered_twice_signs_in_instead_of_failing(db_url, monkeypatch):
    """Chromium can deliver the first-lead form twice into overlapping runs: the second finds the lead the first
    created. With the same name and password it signs in (as the sign-in form would); otherwise it says sign in."""
    at, other = _app(), _app()  # two browsers showing the form before any lead exists
    assert _titles(at) == _titles(other) == ["Welcome to SAGE Studio"]
    accounts.create_account("Lea", PW, role="lead", db=db_url)  # the first delivery, landed meanwhile
    at.text_input(key="first_name").set_value("lea")
    at.text_input(key="first_password").set_value(PW)
    at.text_input(key="first_password2").set_value(PW)
    at.button(key="first_submit").click().run()
    assert not at.exception and not at.error
    assert _titles(at) == ["SAGE Studio"] and any("Signed in as **Lea**" in m.value for m in at.markdown)
    assert [(a.name, a.role) for a in accounts.list_accounts(db=db_url)] == [("Lea", "lead")]
    # someone else's form, with another password: no sign-in, told to sign in
    accounts.set_password("Lea", PW + "-changed", db=db_url)
    other.text_input(key="first_name").set_value("Lea")
    other.text_input(key="first_password").set_value(PW)
    other.text_input(key="first_password2").set_value(PW)
    other.button(key="first_submit").click().run()
    assert any("a lead exists already: sign in" in e.value for e in other.error)
    assert _titles(other) == ["Sign in to SAGE Studio"]


def test_no_first_run_form_on_an_annotation_only_server(db_url, monkeypatch):
    monkeypatch.setenv("SAGE_ANNOTATION_ONLY", "1")
    at = _app("pages/2_Blind_annotation.py")
    assert _titles(at) == ["Sign in to SAGE Studio"] and accounts.count_leads(db=db_url) == 0


def test_first_run_form_is_for_loopback_connections_only():
    from ui.auth import is_loopback

    assert is_loopback(None) and is_loopback("127.0.0.1") and is_loopback("::1")
    assert is_loopback("::ffff:127.0.0.1")  # how Chromium reaches 127.0.0.1
    assert not any(is_loopback(ip) for ip in ("10.0.0.2", "::ffff:10.0.0.2", "192.168.1.5", "fe80::1%eth0", "x"))
