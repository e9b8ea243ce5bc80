"""LLM-judge baselines end to end against the real local server (CLI subprocesses).

The server's script answers per turn (regex on the judged reply's marker), so
each test knows exactly which label, class, escalation and cost must come out.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sage_core.data.slice_io import read_slice
from sage_core.data.verdict_io import read_evaluator_verdicts
from sage_core.llm.baselines.geval import f1_at, fit_threshold
from sage_core.llm.baselines.prompts import build_messages, parse_geval, parse_label
from sage_core.llm.baselines.runner import run_baseline
from sage_core.llm.client import LLMClient
from sage_core.specs.loading import load_workflows
from tests.llm_server import count_tokens, llm_server  # noqa: F401 (fixture)

REPO = Path(__file__).resolve().parents[1]
WF = "Restaurants_1:ReserveRestaurant"
SCHEMA = [{
    "service_name": "Restaurants_1", "description": "Restaurant reservations",
    "slots": [{"name": "restaurant_name", "description": "Name of the restaurant"},
              {"name": "city", "description": "City of the restaurant"},
              {"name": "time", "description": "Reservation time"},
              {"name": "party_size", "description": "Number of people"}],
    "intents": [{"name": "ReserveRestaurant", "description": "Reserve a table",
                 "required_slots": ["restaurant_name", "city", "time"],
                 "optional_slots": {"party_size": "2"}, "is_transactional": True}],
}]


def turn(tid, user, agent, before, after, label, cls=None):
    return {"turn_id": tid, "dialogue_id": tid.split("-")[0], "workflow": WF,
            "history": [{"speaker": "user", "text": "I need a table."},
                        {"speaker": "agent", "text": "Sure, where and when?"}],
            "user": user, "agent": agent, "state_before": before, "state_after": after,
            "gold": {"label": label, "class": cls}}


TEST_TURNS = [
    turn("a-1", "Luigi's in San Jose at 7 pm.", "Booked Luigi's for 7 pm. [mk-ok1]",
         {}, {"restaurant_name": "Luigi", "city": "SJC-STATE", "time": "19:00"}, "acceptable"),
    turn("b-1", "Make it in Oakland.", "Got it, San Jose then. What time? [mk-iuv]",
         {"restaurant_name": "Luigi"}, {"restaurant_name": "Luigi", "city": "SJC-STATE"}, "failure", "IUV"),
    turn("c-1", "Luigi's please.", "Which restaurant would you like? [mk-wnf]",
         {}, {"restaurant_name": "Luigi"}, "failure", "WNF"),
    turn("d-1", "Luigi's in Oakland.", "And what time would you like? [mk-ok2]",
         {}, {"restaurant_name": "Luigi", "city": "Oakland"}, "acceptable"),
]
DEV_TURNS = [
    turn("v-1", "Luigi's.", "Which city? [dev-s20]", {}, {"restaurant_name": "Luigi"}, "failure", "WNF"),
    turn("w-1", "Luigi's.", "Which city? [dev-s30]", {}, {"restaurant_name": "Luigi"}, "acceptable"),
    turn("x-1", "Luigi's.", "Which city? [dev-s35]", {}, {"restaurant_name": "Luigi"}, "failure", "PC"),
    turn("y-1", "Luigi's.", "Which city? [dev-s40]", {}, {"restaurant_name": "Luigi"}, "acceptable"),
]


@pytest.fixture
def files(tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    sl = tmp_path / "test.jsonl"
    sl.write_text("".join(json.dumps(t) + "\n" for t in TEST_TURNS))
    dev = tmp_path / "dev.jsonl"
    dev.write_text("".join(json.dumps(t) + "\n" for t in DEV_TURNS))
    return {"schema": schema, "slice": sl, "dev": dev, "tmp": tmp_path}


def cli(srv_url, files, *args, out="verdicts.jsonl", cache="cache"):
    env = dict(os.environ, SAGE_LLM_BASE_URL=srv_url, SAGE_LLM_API_KEY="test-key",
               SAGE_LLM_MODEL="gpt-4.1-mini", SAGE_LLM_STRONG_MODEL="gpt-4.1",
               SAGE_CACHE_DIR=str(files["tmp"] / cache))
    env.pop("SAGE_LLM_PRICE_FILE", None)
    outp = files["tmp"] / out
    cmd = [sys.executable, "-m", "sage_core", "baseline", "--slice", str(files["slice"]),
           "--schema", str(files["schema"]), "--out", str(outp), *args]
    p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    rows = [json.loads(x) for x in outp.read_text().splitlines()] if p.returncode == 0 else None
    return p, rows, outp


def expected_cost(requests, pin, pout, answers_per_request):
    total = 0.0
    for r, texts in zip(requests, answers_per_request):
        pt = sum(count_tokens(m["content"]) for m in r.messages)
        ct = sum(count_tokens(t) for t in texts)
        total += (pt * pin + ct * pout) / 1e6
    return total


# --- prompts -------------------------------------------------------------------
def test_state_aware_prompt_has_state_pair_transcript_does_not(files):
    reg = load_workflows(files["schema"])
    t = read_slice(files["slice"])[0]
    state = build_messages(t, reg.get(WF), "state", "TASK")[1]["content"]
    trans = build_messages(t, reg.get(WF), "transcript", "TASK")[1]["content"]
    for text in (state, trans):
        assert "I need a table." in text and "Luigi's in San Jose at 7 pm." in text and "[mk-ok1]" in text
    assert '"city": "SJC-STATE"' in state and '"time": "19:00"' in state and "(s_t-1): {} (empty)" in state
    assert "Required slots: restaurant_name" in state
    assert "SJC-STATE" not in trans and "19:00" not in trans and "Required slots" not in trans
    assert build_messages(t, reg.get(WF), "state", "TASK")[0] == build_messages(t, reg.get(WF), "transcript", "X")[0]


def test_answer_parsers():
    assert parse_geval("steps...\nFailure class: WNF\nAcceptability: 2") == (2.0, "WNF")
    assert parse_geval("Acceptability: 4\n...Acceptability: **3**") == (3.0, None)
    assert parse_geval("I think it is fine.") == (None, None)
    assert parse_label('{"label": "failure", "class": "uv"}') == ("failure", "UV", None)
    assert parse_label('{"label": "clean", "class": "UV"}') == ("acceptable", None, None)
    assert parse_label("failure: PC") == ("failure", "PC", None)
    assert parse_label("it might be a failure") == (None, None, None)
    assert parse_label('{"label": "clean"}', want_confidence=True) == (None, None, None)
    assert parse_label('{"label": "clean", "confidence": 0.7}', want_confidence=True) == ("acceptable", None, 0.7)


# --- direct --------------------------------------------------------------------
DIRECT_RULES = [(r"reply to judge: [^\n]*mk-ok", '{"label": "clean", "class": null}'),
                (r"reply to judge: [^\n]*mk-iuv", '{"label": "failure", "class": "IUV"}'),
                (r"reply to judge: [^\n]*mk-wnf", "failure WNF")]


@pytest.mark.parametrize("mode", ["transcript", "state"])
def test_direct_cli_both_modes(llm_server, files, mode):
    for r in DIRECT_RULES:
        llm_server.add_rule(*r)
    p, rows, outp = cli(llm_server.base_url, files, "--method", "direct", "--mode", mode)
    assert p.returncode == 0, p.stderr
    ev = read_evaluator_verdicts(outp)
    assert ev.name == f"direct-{mode}"
    assert ev.labels == {"a-1": "acceptable", "b-1": "failure", "c-1": "failure", "d-1": "acceptable"}
    assert ev.classes == {"b-1": ["IUV"], "c-1": ["WNF"]} and ev.confidence is None
    reqs = llm_server.requests
    assert len(reqs) == 4 and {r.model for r in reqs} == {"gpt-4.1"}
    assert all(r.temperature == 0.0 and r.n == 1 for r in reqs)
    assert all(("Tracker state before" in r.prompt) == (mode == "state") for r in reqs)
    answers = [[DIRECT_RULES[0][1]], [DIRECT_RULES[1][1]], [DIRECT_RULES[2][1]], [DIRECT_RULES[0][1]]]
    by_turn = {r.prompt.split("[mk-")[1][:3]: r for r in reqs}
    ordered = [by_turn["ok1"], by_turn["iuv"], by_turn["wnf"], by_turn["ok2"]]
    total = expected_cost(ordered, 2.0, 8.0, answers)
    assert sum(r["cost_usd"] for r in rows) == pytest.approx(total, rel=1e-9)
    assert f"cost per 1k turns: ${total / 4 * 1000:.4f}" in p.stdout
    assert "p50 latency:" in p.stdout and all(r["paid_calls"] == 1 for r in rows)

    # a rerun is served from the cache: no request, 0 paid calls, same method cost
    p2, rows2, _ = cli(llm_server.base_url, files, "--method", "direct", "--mode", mode, out="again.jsonl")
    assert p2.returncode == 0 and llm_server.count() == 4
    assert all(r["paid_calls"] == 0 and r["cached_calls"] == 1 for r in rows2)
    assert [r["cost_usd"] for r in rows2] == [r["cost_usd"] for r in rows]
    assert "(0 paid, 4 from cache)" in p2.stdout


def test_unparsable_direct_answer_is_undecided(llm_server, files):
    llm_server.default = "I cannot tell."
    reg = load_workflows(files["schema"])
    client = LLMClient("gpt-4.1", llm_server.base_url, "k", None)
    rows = run_baseline("direct", "transcript", read_slice(files["slice"]), reg, client)
    assert [r["label"] for r in rows] == ["undecided"] * 4 and "unparsable" in rows[0]["rationale"]


# --- G-Eval ----------------------------------------------------------------------
def form(score, cls="none"):
    return f"Step 1: checked. Step 2: checked.\nFailure class: {cls}\nAcceptability: {score}"


GEVAL_RULES = [
    (r"reply to judge: [^\n]*mk-ok1", [form(5)] * 6),                       # mean 5.0
    (r"reply to judge: [^\n]*mk-iuv", [form(1, "IUV")] * 5 + [form(2, "WNF")]),  # mean 1.1667
    (r"reply to judge: [^\n]*mk-wnf", [form(4, "WNF"), form(3, "WNF")] * 3),  # mean 3.5
    (r"reply to judge: [^\n]*mk-ok2", [form(4)] * 6),                       # mean 4.0
    (r"reply to judge: [^\n]*dev-s20", [form(2)] * 6),
    (r"reply to judge: [^\n]*dev-s30", [form(3)] * 6),
    (r"reply to judge: [^\n]*dev-s35", [form(3), form(4)] * 3),
    (r"reply to judge: [^\n]*dev-s40", [form(4)] * 6),
]


def test_fit_threshold_maximises_dev_f1():
    means, gold = [2.0, 3.0, 3.5, 4.0], [True, False, True, False]
    thr, f1 = fit_threshold(means, gold)
    assert thr == pytest.approx(3.75) and f1 == pytest.approx(0.8)
    assert all(f1_at(t, means, gold) <= f1 for t in (1.5, 2.5, 3.25, 4.5, 5.5))
    with pytest.raises(Exception, match="at least one gold failure"):
        fit_threshold([2.0, 3.0], [False, False])


@pytest.mark.parametrize("mode", ["transcript", "state"])
def test_geval_cli_fits_threshold_on_dev(llm_server, files, mode):
    for r in GEVAL_RULES:
        llm_server.add_rule(*r)
    p, rows, outp = cli(llm_server.base_url, files, "--method", "geval", "--mode", mode, "--dev", str(files["dev"]))
    assert p.returncode == 0, p.stderr
    assert "threshold: 3.7500 (fitted on 4 dev turns, dev F1 0.800" in p.stdout
    by = {r["turn_id"]: r for r in rows}
    assert by["c-1"]["score"] == pytest.approx(3.5) and by["c-1"]["label"] == "failure"  # 3.5 < 3.75
    assert by["c-1"]["class"] == "WNF"
    assert by["b-1"]["label"] == "failure" and by["b-1"]["class"] == "IUV"
    assert by["a-1"]["label"] == "acceptable" and by["d-1"]["label"] == "acceptable"
    assert by["a-1"]["confidence"] == pytest.approx(min(1.0, (5.0 - 3.75) / 2))
    reqs = llm_server.requests
    assert len(reqs) == 8 and all(r.n == 6 and r.temperature == 1.0 for r in reqs)  # 4 dev + 4 test
    assert all(("Tracker state after" in r.prompt) == (mode == "state") for r in reqs)
    assert read_evaluator_verdicts(outp).name == f"geval-{mode}"

    # without a dev split the default threshold 3.0 keeps c-1 (mean 3.5) acceptable
    p2, rows2, _ = cli(llm_server.base_url, files, "--method", "geval", "--mode", mode, out="nodev.jsonl")
    assert p2.returncode == 0 and "threshold: 3.0000 (default)" in p2.stdout
    assert {r["turn_id"]: r["label"] for r in rows2}["c-1"] == "acceptable"
    assert llm_server.count() == 8  # the test turns came from the cache


# --- FrugalGPT --------------------------------------------------------------------
def ans(label, conf, cls=None):
    return json.dumps({"label": label, "class": cls, "confidence": conf})


def frugal_rules(srv):
    cheap, strong = "gpt-4.1-mini", "gpt-4.1"
    srv.add_rule(r"reply to judge: [^\n]*mk-ok1", [ans("clean", 0.95)] * 2, model=cheap)
    srv.add_rule(r"reply to judge: [^\n]*mk-iuv", [ans("failure", 0.9, "IUV"), ans("clean", 0.9)], model=cheap)
    srv.add_rule(r"reply to judge: [^\n]*mk-wnf", [ans("failure", 0.6, "WNF")] * 2, model=cheap)
    srv.add_rule(r"reply to judge: [^\n]*mk-ok2", [ans("clean", 0.85)] * 2, model=cheap)
    srv.add_rule(r"reply to judge: [^\n]*mk-iuv", ans("failure", 0.97, "IUV"), model=strong)
    srv.add_rule(r"reply to judge: [^\n]*mk-wnf", ans("failure", 0.92, "WNF"), model=strong)


@pytest.mark.parametrize("mode", ["transcript", "state"])
def test_frugal_cli_escalates_only_low_confidence_turns(llm_server, files, mode):
    frugal_rules(llm_server)
    p, rows, outp = cli(llm_server.base_url, files, "--method", "frugal", "--mode", mode)
    assert p.returncode == 0, p.stderr
    assert llm_server.count("gpt-4.1-mini") == 4 and llm_server.count("gpt-4.1") == 2
    by = {r["turn_id"]: r for r in rows}
    assert [by[t]["escalated"] for t in ("a-1", "b-1", "c-1", "d-1")] == [False, True, True, False]
    assert by["b-1"]["cheap_confidence"] == pytest.approx(0.45)  # disagreement halves 0.9
    assert by["b-1"]["label"] == "failure" and by["b-1"]["class"] == "IUV" and by["b-1"]["paid_calls"] == 2
    assert by["c-1"]["decided_by"] == "gpt-4.1" and by["c-1"]["confidence"] == pytest.approx(0.92)
    assert by["d-1"]["label"] == "acceptable" and by["d-1"]["confidence"] == pytest.approx(0.85)
    assert all(r.n == 2 for r in llm_server.requests if r.model == "gpt-4.1-mini")
    assert all(r.n == 1 and r.temperature == 0.0 for r in llm_server.requests if r.model == "gpt-4.1")
    assert all(("Required slots" in r.prompt) == (mode == "state") for r in llm_server.requests)
    assert "escalated: 2 of 4 turns to gpt-4.1" in p.stdout
    # cost: cheap prices on every turn, strong prices on the two escalations
    cheap_cost = sum(r["cost_usd"] for r in rows if not r["escalated"])
    ok_reqs = [r for r in llm_server.requests if r.model == "gpt-4.1-mini" and "mk-ok" in r.prompt]
    ok_answers = [[ans("clean", 0.95)] * 2 if "mk-ok1" in r.prompt else [ans("clean", 0.85)] * 2 for r in ok_reqs]
    assert cheap_cost == pytest.approx(expected_cost(ok_reqs, 0.40, 1.60, ok_answers), rel=1e-9)
    ev = read_evaluator_verdicts(outp)
    assert ev.name == f"frugal-{mode}" and set(ev.confidence) == set(ev.labels)


def test_frugal_threshold_controls_escalation(llm_server, files):
    frugal_rules(llm_server)
    reg = load_workflows(files["schema"])
    cheap = LLMClient("gpt-4.1-mini", llm_server.base_url, "k", None)
    strong = LLMClient("gpt-4.1", llm_server.base_url, "k", None)
    rows = run_baseline("frugal", "state", read_slice(files["slice"]), reg, (cheap, strong), escalate_below=0.4)
    assert llm_server.count("gpt-4.1") == 0 and not any(r["escalated"] for r in rows)
    assert {r["turn_id"]: r["label"] for r in rows}["c-1"] == "failure"


# --- errors ------------------------------------------------------------------------
def test_cli_unreachable_endpoint_is_a_clean_error(files):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p, _, _ = cli(f"http://127.0.0.1:{port}/v1", files, "--method", "direct", "--mode", "state")
    assert p.returncode == 2
    assert p.stderr.startswith("error: ") and f"127.0.0.1:{port}" in p.stderr and "Traceback" not in p.stderr


def test_cli_unknown_model_reports_unknown_cost(llm_server, files):
    llm_server.default = '{"label": "clean", "class": null}'
    p, rows, _ = cli(llm_server.base_url, files, "--method", "direct", "--mode", "transcript",
                     "--model", "local-llama")
    assert p.returncode == 0, p.stderr
    assert "cost per 1k turns: unknown" in p.stdout and all(r["cost_usd"] is None for r in rows)
    prices = files["tmp"] / "prices.json"
    prices.write_text(json.dumps({"local-llama": {"input": 1.0, "output": 1.0}}))
    p2, rows2, _ = cli(llm_server.base_url, files, "--method", "direct", "--mode", "transcript",
                       "--model", "local-llama", "--prices", str(prices), out="priced.jsonl")
    assert p2.returncode == 0 and all(r["cost_usd"] > 0 for r in rows2)


def test_cli_without_key_names_the_env_var(llm_server, files):
    env = {k: v for k, v in os.environ.items() if k != "SAGE_LLM_API_KEY"}
    env.update(SAGE_LLM_BASE_URL=llm_server.base_url, SAGE_CACHE_DIR=str(files["tmp"] / "c"), PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, "-m", "sage_core", "baseline", "--method", "direct", "--mode", "state",
                        "--slice", str(files["slice"]), "--schema", str(files["schema"]),
                        "--out", str(files["tmp"] / "o.jsonl")], cwd=files["tmp"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "SAGE_LLM_API_KEY" in p.stderr and llm_server.attempts == 0


def test_workers_keep_turn_order(llm_server, files):
    for r in DIRECT_RULES:
        llm_server.add_rule(*r)
    reg = load_workflows(files["schema"])
    client = LLMClient("gpt-4.1", llm_server.base_url, "k", None)
    turns = read_slice(files["slice"])
    rows = run_baseline("direct", "state", turns, reg, client, workers=3)
    assert [r["turn_id"] for r in rows] == ["a-1", "b-1", "c-1", "d-1"]
    assert [r["label"] for r in rows] == ["acceptable", "failure", "failure", "acceptable"]
