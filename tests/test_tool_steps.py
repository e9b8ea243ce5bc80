"""SAGE on tool-calling agent steps: hand-written transcripts through the real cascade (S1 + offline S2)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sage_core import CascadeConfig, Evaluator
from sage_core.corpora.agent_logs import load_agent_logs
from tests.llm_server import llm_server  # noqa: F401 (fixture)

TOOLS = [
    {"type": "function", "function": {"name": "get_user", "parameters": {
        "type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}}},
    {"type": "function", "function": {"name": "get_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
    {"type": "function", "function": {"name": "ship_order", "parameters": {
        "type": "object", "properties": {
            "order_id": {"type": "string"},
            "speed": {"type": "string", "enum": ["standard", "express"]},
            "insurance": {"type": "string", "enum": ["yes", "no"]},
            "payment_id": {"type": "string"},
            "boxes": {"type": "integer"}},
        "required": ["order_id", "speed", "insurance", "payment_id"]}}},
    {"type": "function", "function": {"name": "think", "parameters": {
        "type": "object", "properties": {"thought": {"type": "string"}}, "required": ["thought"]}}},
]
POLICY = """service: shop
consequential: [ship_order]
requires_called: {ship_order: [get_order]}
exempt: [think]
ask_order: [[user_id], [order_id]]
field_words: {user_id: [user id], order_id: [order id, order number]}
grounding:
  ship_order.payment_id: [get_user]
free_text: [thought]
request_words: {ship_order: [ship]}
handoff: []
"""
USER_OUT = '{"user_id": "kim_7", "payment_methods": {"card_4431": {"last_four": "4431"}}}'
ORDER_OUT = '{"order_id": "#A100", "status": "pending", "items": 2}'


def call(cid, name, args):
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}


def out(cid, text):
    return {"role": "tool", "tool_call_id": cid, "content": text}


def conv(cid, tail, first="Hi, I'm kim_7. Please ship my order #A100 by express, and no insurance."):
    head = [
        {"role": "user", "content": first},
        call("u", "get_user", {"user_id": "kim_7"}), out("u", USER_OUT),
        call("o", "get_order", {"order_id": "#A100"}), out("o", ORDER_OUT),
    ]
    return {"id": cid, "messages": head + tail}


LISTING = {"role": "assistant", "content": "I will ship order #A100 by express, without insurance, paid with card "
                                           "4431. Shall I go ahead?"}
SHIP = {"order_id": "#A100", "speed": "express", "insurance": "no", "payment_id": "card_4431"}


def evaluate_transcripts(folder, convs, tools, policy):
    """Write OpenAI transcripts, a tools file and a policy to ``folder``, load them and run SAGE-Core (offline S2):
    [(turn, verdict)] in step order."""
    logs = folder / "logs.jsonl"
    logs.write_text("\n".join(json.dumps(c) for c in convs) + "\n", encoding="utf-8")
    (folder / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    (folder / "policy.yaml").write_text(policy, encoding="utf-8")
    turns, reg = load_agent_logs("openai", logs, folder / "tools.json", folder / "policy.yaml")
    return list(zip(turns, Evaluator(reg, CascadeConfig(name="sage-core", s2_backend="offline")).evaluate(turns)))


@pytest.fixture()
def run(tmp_path):
    def _run(*convs, policy=POLICY):
        return {t.turn_id: (t, v) for t, v in evaluate_transcripts(tmp_path, convs, TOOLS, policy)}
    return _run


def ship_step(res, dialogue):
    return next((t, v) for t, v in res.values() if t.dialogue_id == dialogue and t.meta["step"].get("tool") == "ship_order")


def fired(v):
    return {(tr.criterion.type.value, tr.criterion.args.get("rule"), tr.final.stage.value)
            for tr in v.traces if tr.final.decision.value == "true"}


def test_confirmed_grounded_call_is_acceptable(run):
    res = run(conv("good", [LISTING, {"role": "user", "content": "Yes, go ahead."}, call("s", "ship_order", SHIP),
                            out("s", '{"status": "shipped"}'), {"role": "assistant", "content": "Shipped!"}]))
    t, v = ship_step(res, "good")
    assert v.label.value == "acceptable", [tr.final.rationale for tr in v.traces]
    pc = next(tr for tr in v.traces if tr.criterion.type.value == "PC")
    assert pc.final.stage.value == "S1" and pc.final.decision.value == "false"
    assert all(v.label.value != "failure" for _, v in res.values())


def test_write_without_a_yes_is_premature(run):
    res = run(conv("noyes", [LISTING, {"role": "user", "content": "Hmm, how long does express take?"},
                             call("s", "ship_order", SHIP), out("s", '{"status": "shipped"}')]))
    t, v = ship_step(res, "noyes")
    assert v.label.value == "failure" and ("PC", "confirmation", "S1") in fired(v)


def test_unsupported_values_and_contradicted_user_value(run):
    bad = dict(SHIP, payment_id="card_9999", insurance="yes")  # a card not in the profile; insurance the user declined
    res = run(conv("uv", [LISTING, {"role": "user", "content": "Yes."}, call("s", "ship_order", bad),
                          out("s", '{"status": "shipped"}')]))
    t, v = ship_step(res, "uv")
    f = fired(v)
    assert ("UV", "argument", "S1") in f  # payment_id: not in get_user's output, where the policy says it comes from
    assert ("IUV", "enum_mention", "S2-symbolic") in f  # "no insurance" vs insurance=yes
    uv = next(tr for tr in v.traces if tr.criterion.args.get("slot") == "payment_id")
    assert "get_user" in uv.final.rationale


def test_hallucinated_id_prerequisite_and_rejected_write(run):
    c = {"id": "pre", "messages": [
        {"role": "user", "content": "Ship my order express please, no insurance. Yes, do it."},
        call("s", "ship_order", dict(SHIP, order_id="#Z999", payment_id="card_4431")),
        out("s", "Error: order not found")]}
    res = run(c)
    t, v = ship_step(res, "pre")
    f = fired(v)
    assert ("WNF", "prerequisite", "S1") in f  # get_order never ran
    assert ("UV", "rejected", "S1") in f
    assert any(tr.criterion.args.get("slot") == "order_id" and tr.final.decision.value == "true"
               for tr in v.traces)  # #Z999 appears nowhere


def test_dropped_request_at_the_end_and_request_order(run):
    c = {"id": "drop", "messages": [
        {"role": "user", "content": "Please ship my order."},
        {"role": "assistant", "content": "Sure. What is your order number?"},
        {"role": "user", "content": "It's #A100."},
        {"role": "assistant", "content": "Thanks, have a nice day!"}]}
    res = run(c)
    steps = [v for t, v in sorted(res.values(), key=lambda x: x[0].turn_id)]
    assert ("WNF", "ask_order", "S2-symbolic") in fired(steps[0])  # order id asked before the user id
    assert ("IUV", "dropped_request", "S2-symbolic") in fired(steps[-1])


def test_a_decline_without_the_lookup_the_write_needs_is_a_dropped_request(run):
    """A refusal can be right, but only once the record the policy's conditions are read from was looked up."""
    unchecked = {"id": "unchecked", "messages": [
        {"role": "user", "content": "Please ship my order. I don't have the order number with me."},
        {"role": "assistant", "content": "Unfortunately, I cannot proceed without the order number."},
        {"role": "user", "content": "Okay, bye."},
        {"role": "assistant", "content": "Goodbye!"}]}
    checked = {"id": "checked", "messages": [
        {"role": "user", "content": "Hi, I'm kim_7. Please ship my order #A100."},
        call("u", "get_user", {"user_id": "kim_7"}), out("u", USER_OUT),
        call("o", "get_order", {"order_id": "#A100"}), out("o", ORDER_OUT),
        {"role": "assistant", "content": "Unfortunately, this order cannot be shipped yet."},
        {"role": "user", "content": "Okay, bye."},
        {"role": "assistant", "content": "Goodbye!"}]}
    res = run(unchecked, checked)

    def last(dialogue):
        t, v = max((x for x in res.values() if x[0].dialogue_id == dialogue), key=lambda x: x[0].meta["step"]["index"])
        return next(tr for tr in v.traces if tr.criterion.args.get("rule") == "dropped_request")

    tr = last("unchecked")
    assert tr.criterion.args["refused"] and tr.criterion.args["unchecked"] == ["get_order"]
    assert tr.final.decision.value == "true" and "get_order" in tr.final.rationale
    tr = last("checked")  # looked up, then declined: whether the decline is right is left open
    assert tr.criterion.args["refused"] and tr.criterion.args["unchecked"] == []
    assert tr.final.decision.value == "abstain"


def parallel_dialogue(cid):
    """Two lookups in one message, then a write announced and made in one message after an explicit yes."""
    return {"id": cid, "messages": [
        {"role": "user", "content": "Hi, I'm kim_7. Please ship my order #A100 by express, and no insurance."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "u", "type": "function", "function": {"name": "get_user", "arguments": '{"user_id": "kim_7"}'}},
            {"id": "o", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "#A100"}'}}]},
        out("o", ORDER_OUT), out("u", USER_OUT),
        LISTING, {"role": "user", "content": "Yes, go ahead."},
        {"role": "assistant", "content": "Shipping it now.", "tool_calls": [
            {"id": "s", "type": "function", "function": {"name": "ship_order", "arguments": json.dumps(SHIP)}}]},
        out("s", '{"status": "shipped"}'), {"role": "assistant", "content": "Shipped!"}]}


def one_call_verdicts(v):
    return [tr.final for tr in v.traces if tr.criterion.args.get("rule") == "one_call_per_message"]


def test_parallel_calls_load_and_are_flagged_only_under_the_policy_flag(run):
    # without the flag (normal OpenAI transcripts): parallel calls and a reply beside a call are fine
    res = run(parallel_dialogue("free"))
    steps = sorted(res.values(), key=lambda x: x[0].turn_id)
    assert [t.meta["step"].get("tool") for t, _ in steps] == ["get_user", "get_order", None, None, "ship_order", None]
    assert [t.meta["step"].get("position") for t, _ in steps if t.meta["step"]["kind"] == "tool_call"] == [0, 1, 0]
    assert steps[4][0].meta["step"]["with_reply"] and not steps[0][0].meta["step"]["with_reply"]
    assert all(not one_call_verdicts(v) for _, v in steps)
    assert all(v.label.value != "failure" for _, v in steps), [fired(v) for _, v in steps]
    # with the flag: the second call of the message and the call made beside a reply fail at S1, as WNF
    res = run(parallel_dialogue("strict"), policy=POLICY + "one_call_per_message: true\n")
    steps = sorted(res.values(), key=lambda x: x[0].turn_id)
    first, second, ship = steps[0][1], steps[1][1], steps[4][1]
    assert [(f.decision.value, f.stage.value) for f in one_call_verdicts(first)] == [("false", "S1")]
    assert first.label.value == "acceptable"
    assert second.label.value == "failure" and ("WNF", "one_call_per_message", "S1") in fired(second)
    assert ship.label.value == "failure" and ("WNF", "one_call_per_message", "S1") in fired(ship)
    assert "replies to the user" in one_call_verdicts(ship)[0].rationale
    assert not ({"PC", "UV", "IUV"} & {c for c, _, _ in fired(ship)})  # only the new rule fires on the write
    # replies never carry the criterion (the call of the same message does)
    assert all(not one_call_verdicts(v) for t, v in steps if t.meta["step"]["kind"] == "reply")


def _load_ship_logs(tmp_path, name: str) -> list[str]:
    """Write one OpenAI-format conversation that ships an order, the tools and the policy, and convert them with
    ``load-agent-logs`` into tmp_path/s.jsonl and spec.yaml; returns the CLI's command prefix."""
    logs = tmp_path / "logs.json"
    logs.write_text(json.dumps([conv(name, [LISTING, {"role": "user", "content": "Yes"},
                                            call("s", "ship_order", SHIP), out("s", "{}")])]), encoding="utf-8")
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    (tmp_path / "policy.yaml").write_text(POLICY, encoding="utf-8")
    base = [sys.executable, "-m", "sage_core"]
    r = subprocess.run(base + ["load-agent-logs", "--format", "openai", "--logs", str(logs), "--tools",
                               str(tmp_path / "tools.json"), "--policy", str(tmp_path / "policy.yaml"),
                               "--out", str(tmp_path / "s.jsonl"), "--spec-out", str(tmp_path / "spec.yaml")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return base


def test_cli_round_trip_and_evaluate(tmp_path):
    base = _load_ship_logs(tmp_path, "cli")
    r = subprocess.run(base + ["evaluate", "--slice", str(tmp_path / "s.jsonl"), "--schema", str(tmp_path / "spec.yaml"),
                               "--out", str(tmp_path / "v.jsonl"), "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    vs = [json.loads(x) for x in (tmp_path / "v.jsonl").read_text().splitlines()]
    ship = next(v for v in vs if any(c["criterion"]["type"] == "PC" for c in v["criteria"]))
    assert ship["label"] == "acceptable"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "x", "messages": [{"role": "tool", "tool_call_id": "nope", "content": "1"}]}]))
    r = subprocess.run(base + ["load-agent-logs", "--format", "openai", "--logs", str(bad), "--tools",
                               str(tmp_path / "tools.json"), "--out", str(tmp_path / "b.jsonl"),
                               "--spec-out", str(tmp_path / "b.yaml")], capture_output=True, text=True)
    assert r.returncode == 2 and "conversation 'x', message 0" in r.stderr and "Traceback" not in r.stderr


def test_retail_policy_alternative_prerequisites(shared_data, tmp_path):
    """The shipped retail policy: authenticate by email *or* name + zip before any other call."""
    tools = shared_data / "tau_bench" / "retail" / "tools.json"

    def dialogue(cid, authenticate, status="pending"):
        msgs = [{"role": "user", "content": "Hi, please cancel order #W2611340, I ordered it by mistake. "
                                            "My email is yusuf.rossi7301@example.com."}]
        if authenticate:
            msgs += [call("f", "find_user_id_by_email", {"email": "yusuf.rossi7301@example.com"}),
                     out("f", "yusuf_rossi_9620")]
        msgs += [call("g", "get_order_details", {"order_id": "#W2611340"}),
                 out("g", '{"order_id": "#W2611340", "user_id": "yusuf_rossi_9620", "status": "%s"}' % status),
                 {"role": "assistant", "content": "Order #W2611340 is pending. I will cancel it with reason "
                                                  "'ordered by mistake'. Do you confirm (yes/no)?"},
                 {"role": "user", "content": "yes"},
                 call("c", "cancel_pending_order", {"order_id": "#W2611340", "reason": "ordered by mistake"}),
                 out("c", '{"order_id": "#W2611340", "status": "cancelled"}')]
        return {"id": cid, "messages": msgs}

    logs = tmp_path / "retail.jsonl"
    logs.write_text("\n".join(json.dumps(dialogue(c, a, st)) for c, a, st in
                              (("auth", True, "pending"), ("noauth", False, "pending"),
                               ("delivered", True, "delivered"))) + "\n")
    turns, reg = load_agent_logs("openai", logs, tools, "data/specs/tau_bench_retail.yaml")
    vs = {v.turn_id: v for v in Evaluator(reg, CascadeConfig(name="sage-core", s2_backend="offline")).evaluate(turns)}
    by = {(t.dialogue_id, t.meta["step"].get("tool")): vs[t.turn_id] for t in turns}
    assert by[("auth", "cancel_pending_order")].label.value == "acceptable"
    assert by[("auth", "get_order_details")].label.value == "acceptable"
    assert ("WNF", "prerequisite", "S1") in fired(by[("noauth", "get_order_details")])  # not authenticated first
    # "An order can only be cancelled if its status is 'pending'": the order record says delivered
    assert ("UV", "record_rule", "S1") in fired(by[("delivered", "cancel_pending_order")])
    assert ("UV", "record_rule", "S1") not in fired(by[("auth", "cancel_pending_order")])


def test_llm_judge_baseline_runs_on_agent_steps(llm_server, tmp_path):
    """The direct LLM-judge baseline takes the load-agent-logs slice + spec as they are (local test server)."""
    import os

    llm_server.add_rule(r"ship_order\(", '{"label": "failure", "class": "PC"}')
    llm_server.add_rule(r".", '{"label": "clean", "class": null}')
    base = _load_ship_logs(tmp_path, "llm")
    env = dict(os.environ, SAGE_LLM_BASE_URL=llm_server.base_url, SAGE_LLM_API_KEY="k",
               SAGE_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run(base + ["baseline", "--method", "direct", "--mode", "state", "--slice", str(tmp_path / "s.jsonl"),
                               "--schema", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "b.jsonl")],
                       capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode == 0, r.stderr
    rows = {x["turn_id"]: x for x in map(json.loads, (tmp_path / "b.jsonl").read_text().splitlines())}
    steps = [json.loads(x) for x in (tmp_path / "s.jsonl").read_text().splitlines()]
    ship = next(s["turn_id"] for s in steps if s["agent"].startswith("ship_order("))
    assert rows[ship]["label"] == "failure" and len(rows) == len(steps)
    assert any("[get_user]" in q.prompt for q in llm_server.requests)  # tool outputs reach the judge's history


def test_noisy_or_dialogue_score_grows_with_failing_steps():
    from types import SimpleNamespace as V

    from sage_core.science.dialogue_score import max_step_score, noisy_or_score

    fail = V(label="failure", confidence=1.0)
    weak = V(label="failure", confidence=0.8)  # probability scale: (1 + margin 0.6) / 2
    ok = V(label="acceptable", confidence=1.0)
    und = V(label="undecided", confidence=0.5)
    assert noisy_or_score([ok, und, ok]) == 0.0  # no failing step: no failure evidence
    one, two = noisy_or_score([fail, ok]), noisy_or_score([fail, ok, fail])
    assert one == pytest.approx(0.5) and two == pytest.approx(0.75)  # 1 - (1 - 0.5)^2
    assert max_step_score([fail, ok]) == max_step_score([fail, ok, fail]) == 1.0  # the max cannot tell them apart
    assert noisy_or_score([weak]) == pytest.approx(0.5 * 0.8) and noisy_or_score([weak]) < one  # less confident: less
    assert noisy_or_score([{"label": "failure", "confidence": 1.0}]) == pytest.approx(0.5)  # verdict dicts too
    with pytest.raises(ValueError):
        noisy_or_score([fail], pi=1.0)


RECORD_TOOLS = [
    {"type": "function", "function": {"name": "get_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
    {"type": "function", "function": {"name": "set_boxes", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}, "boxes": {"type": "integer"}},
        "required": ["order_id", "boxes"]}}},
    {"type": "function", "function": {"name": "set_items", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}, "kind": {"type": "string"},
                                         "items": {"type": "array", "items": {
                                             "type": "object", "properties": {"item_id": {"type": "string"}}}}},
        "required": ["order_id", "items"]}}},
    {"type": "function", "function": {"name": "cancel_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
    {"type": "function", "function": {"name": "get_user", "parameters": {
        "type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}}},
    {"type": "function", "function": {"name": "place_order", "parameters": {
        "type": "object", "properties": {
            "user_id": {"type": "string"}, "speed": {"type": "string", "enum": ["standard", "express"]},
            "insurance": {"type": "string", "enum": ["yes", "no"]},
            "boxes": {"type": "integer"}, "paid_boxes": {"type": "integer"},
            "people": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "payments": {"type": "array", "items": {"type": "object", "properties": {
                "payment_id": {"type": "string"}}}}},
        "required": ["user_id"]}}},
]
RECORD_POLICY = """service: shop
now: "2024-05-15T15:00:00"
record_rules:
  - {tool: set_boxes, record: get_order, key: order_id, not_below: {boxes: boxes}}
  - {tool: set_items, record: get_order, key: order_id, same_count: {items: items}}
  - {tool: set_items, record: get_order, key: order_id, frozen: {arg: items, by: [item_id], when: {kind: [final_sale]}}}
  - tool: cancel_order
    record: get_order
    key: order_id
    allowed_if_any:
      - {field: created_at, within_hours: 24}
      - {field: tier, in: [gold]}
      - {field: insured, in: ["yes"], unsure: true}
      - {user_says: [store cancelled], unsure: true}
  - tool: place_order
    record: get_user
    key: user_id
    allowance: {charged: paid_boxes, total: boxes, items: people,
                per_item: {record_field: tier, arg: speed, table: {regular: {standard: 0, express: 1},
                                                                   gold: {standard: 1, express: 2}}}}
  - tool: place_order
    record: get_user
    key: user_id
    kind_limits: {arg: payments, id: payment_id, kind: "payment_methods.{id}.source", max: {card: 1, gift: 2}}
  - {tool: cancel_order, record: get_order, key: order_id, not_started: {field: legs, date: date}}
must_ask:
  place_order.insurance: [insurance]
"""


def record(**over):
    rec = {"order_id": "#A100", "boxes": 2, "created_at": "2024-05-10T10:00:00", "tier": "regular",
           "insured": "no", "kind": "final_sale", "items": [{"item_id": "i1"}, {"item_id": "i2"}],
           "legs": [{"date": "2024-05-20"}, {"date": "2024-05-24"}]}
    rec.update(over)
    return json.dumps(rec)


def record_dialogue(cid, tool, args, rec=None, user="Please change my order #A100."):
    return {"id": cid, "messages": [
        {"role": "user", "content": user},
        call("g", "get_order", {"order_id": "#A100"}), out("g", rec or record()),
        call("w", tool, dict({"order_id": "#A100"}, **args)), out("w", '{"ok": true}')]}


@pytest.fixture()
def run_records(tmp_path):
    def _run(*convs):
        logs = tmp_path / "r.jsonl"
        logs.write_text("\n".join(json.dumps(c) for c in convs) + "\n", encoding="utf-8")
        (tmp_path / "rtools.json").write_text(json.dumps(RECORD_TOOLS), encoding="utf-8")
        (tmp_path / "rpolicy.yaml").write_text(RECORD_POLICY, encoding="utf-8")
        turns, reg = load_agent_logs("openai", logs, tmp_path / "rtools.json", tmp_path / "rpolicy.yaml")
        verdicts = Evaluator(reg, CascadeConfig(name="sage-core", s2_backend="offline")).evaluate(turns)
        out_ = {}
        for t, v in zip(turns, verdicts):
            if t.meta["step"].get("tool") not in (None, "get_order"):
                out_[t.dialogue_id] = [(tr.criterion.args["check"], tr.final.decision.value, tr.final.stage.value)
                                       for tr in v.traces if tr.criterion.args.get("rule") == "record_rule"]
        return out_
    return _run


def test_record_rules_decide_writes_against_the_looked_up_record(run_records):
    res = run_records(
        record_dialogue("fewer_boxes", "set_boxes", {"boxes": 1}),  # "can add but not remove"
        record_dialogue("more_boxes", "set_boxes", {"boxes": 3}),
        record_dialogue("other_order", "set_boxes", {"boxes": 1}, rec=record(order_id="#B7")),  # no record: no check
        record_dialogue("one_item_dropped", "set_items", {"items": [{"item_id": "i1"}]},
                        rec=record(kind="regular")),  # same number of items
        record_dialogue("frozen_changed", "set_items", {"items": [{"item_id": "i1"}, {"item_id": "i9"}]}),
        record_dialogue("frozen_same", "set_items", {"items": [{"item_id": "i2"}, {"item_id": "i1"}]}),
        record_dialogue("frozen_left", "set_items", {"kind": "regular", "items": [{"item_id": "i1"},
                                                                                 {"item_id": "i9"}]}),
        record_dialogue("cancel_late", "cancel_order", {}),  # 5 days old, regular, uninsured
        record_dialogue("cancel_fresh", "cancel_order", {}, rec=record(created_at="2024-05-15T09:00:00")),
        record_dialogue("cancel_gold", "cancel_order", {}, rec=record(tier="gold")),
        record_dialogue("cancel_insured", "cancel_order", {}, rec=record(insured="yes")),
        record_dialogue("cancel_claim", "cancel_order", {}, user="The store cancelled my order #A100, cancel it."),
        record_dialogue("cancel_started", "cancel_order", {}, rec=record(tier="gold", legs=[{"date": "2024-05-13"},
                                                                                          {"date": "2024-05-20"}])),
    )
    assert res["fewer_boxes"] == [("not_below", "true", "S1")]
    assert res["more_boxes"] == [("not_below", "false", "S1")]
    assert res["other_order"] == []
    assert ("same_count", "true", "S1") in res["one_item_dropped"]
    assert ("frozen", "false", "S1") in res["one_item_dropped"]  # not in the frozen state
    assert ("frozen", "true", "S1") in res["frozen_changed"] and ("same_count", "false", "S1") in res["frozen_changed"]
    assert ("frozen", "false", "S1") in res["frozen_same"]  # order of items does not matter
    assert ("frozen", "abstain", "none") in res["frozen_left"]  # leaves the frozen state in the same call
    assert res["cancel_late"] == [("allowed_if_any", "true", "S1"), ("not_started", "false", "S1")]
    assert res["cancel_fresh"] == res["cancel_gold"] == [("allowed_if_any", "false", "S1"), ("not_started", "false", "S1")]
    assert res["cancel_insured"] == res["cancel_claim"] == [("allowed_if_any", "abstain", "none"),
                                                            ("not_started", "false", "S1")]
    assert res["cancel_started"] == [("allowed_if_any", "false", "S1"), ("not_started", "true", "S1")]  # 05-13 flown


def test_record_rule_policy_errors(tmp_path):
    from sage_core.data.errors import SageInputError
    from sage_core.specs.from_tools import read_policy, registry_from_tools

    p = tmp_path / "p.yaml"
    for text, needle in [
        ("record_rules:\n  - {tool: cancel_order, record: get_order, key: order_id}\n", "exactly one of"),
        ("record_rules:\n  - {tool: cancel_order, record: get_order, key: order_id,\n"
         "     allowed_if_any: [{field: created_at, within_hours: 24}]}\n", "no 'now'"),
        ("record_rules:\n  - {tool: cancel_order, record: get_order, key: order_id,\n"
         "     allowed_if_any: [{user_says: [x]}]}\n", "unsure: true"),
        ("now: yesterday\n", "ISO date-time"),
    ]:
        p.write_text(text, encoding="utf-8")
        with pytest.raises(SageInputError, match=needle):
            read_policy(p)
    p.write_text("record_rules:\n  - {tool: refund, record: get_order, key: order_id, not_below: {a: a}}\n")
    with pytest.raises(SageInputError, match="tool 'refund'"):
        registry_from_tools(RECORD_TOOLS, read_policy(p))


def test_allowance_and_kind_limits_against_the_profile(run_records):
    # the profile does not repeat the user id: the record is the answer of get_user called with it
    profile = json.dumps({"tier": "gold", "payment_methods": {
        "card_1": {"source": "card"}, "card_2": {"source": "card"}, "gift_1": {"source": "gift"}}})

    def order(cid, **args):
        base = {"user_id": "kim_7", "speed": "express", "boxes": 5, "people": [{"name": "Kim"}, {"name": "Lee"}],
                "payments": [{"payment_id": "card_1"}, {"payment_id": "gift_1"}]}
        base.update(args)
        return {"id": cid, "messages": [
            {"role": "user", "content": "I'm kim_7, please place an order."},
            call("g", "get_user", {"user_id": "kim_7"}), out("g", profile),
            call("w", "place_order", base), out("w", '{"ok": true}')]}

    res = run_records(order("right", paid_boxes=1),  # gold, express: 2 free per person, 5 - 4 = 1 paid
                      order("undercharged", paid_boxes=0),
                      order("two_cards", paid_boxes=1, payments=[{"payment_id": "card_1"}, {"payment_id": "card_2"}]),
                      order("no_profile", paid_boxes=0, user_id="other_1"))
    assert sorted(res["right"]) == [("allowance", "false", "S1"), ("kind_limits", "false", "S1")]
    assert ("allowance", "true", "S1") in res["undercharged"]
    assert ("kind_limits", "true", "S1") in res["two_cards"] and ("allowance", "false", "S1") in res["two_cards"]
    assert res["no_profile"] == []  # another user's order: no record, no check


def test_must_ask_an_argument_the_policy_says_to_ask_about(tmp_path):
    def order(cid, asked):
        msgs = [{"role": "user", "content": "I'm kim_7, please place an order by express."}]
        if asked:
            msgs += [{"role": "assistant", "content": "Would you like to add insurance?"},
                     {"role": "user", "content": "No thanks."}]
        msgs += [call("w", "place_order", {"user_id": "kim_7", "speed": "express", "insurance": "no"}),
                 out("w", '{"ok": true}')]
        return {"id": cid, "messages": msgs}

    logs = tmp_path / "m.jsonl"
    logs.write_text("\n".join(json.dumps(order(c, a)) for c, a in (("asked", True), ("silent", False))) + "\n")
    (tmp_path / "t.json").write_text(json.dumps(RECORD_TOOLS), encoding="utf-8")
    (tmp_path / "p.yaml").write_text(RECORD_POLICY, encoding="utf-8")
    turns, reg = load_agent_logs("openai", logs, tmp_path / "t.json", tmp_path / "p.yaml")
    vs = Evaluator(reg, CascadeConfig(name="sage-core", s2_backend="offline")).evaluate(turns)
    got = {t.dialogue_id: [(tr.final.decision.value, tr.final.stage.value) for tr in v.traces
                           if tr.criterion.args.get("rule") == "must_ask"]
           for t, v in zip(turns, vs) if t.meta["step"].get("tool") == "place_order"}
    assert got == {"asked": [("false", "S1")], "silent": [("true", "S1")]}


def test_agent_steps_are_not_embedded_for_the_text_heads(tmp_path):
    """Tool-calling steps have their own criteria and never read the text heads, so the cascade must not spend
    encoder time on their replies (it once embedded every reply of tau-bench: 209 s instead of 8 s)."""
    from sage_core.evaluator.text.heads import load_heads
    from sage_core.evaluator.verify.s2_encoders import embed

    seen: list[str] = []

    def recording_embed(texts):
        seen.extend(texts)
        return embed(texts)

    logs = tmp_path / "logs.jsonl"
    logs.write_text(json.dumps(conv("good", [LISTING, {"role": "user", "content": "Yes, go ahead."},
                                             call("s", "ship_order", SHIP), out("s", '{"status": "shipped"}'),
                                             {"role": "assistant", "content": "Shipped! Anything else?"}])) + "\n",
                    encoding="utf-8")
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    (tmp_path / "policy.yaml").write_text(POLICY, encoding="utf-8")
    turns, reg = load_agent_logs("openai", logs, tmp_path / "tools.json", tmp_path / "policy.yaml")
    heads = load_heads(embed=recording_embed)
    vs = Evaluator(reg, CascadeConfig(name="sage-core", s2_backend="offline"), heads=heads).evaluate(turns)
    assert len(vs) == len(turns) >= 4 and any(t.agent.startswith("Shipped") for t in turns)
    assert seen == []
    # a text-only SGD-style turn in the same evaluator does go through the heads (the recorder works)
    heads.act_probs("Which city are you flying from?")
    assert seen
