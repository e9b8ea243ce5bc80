"""Loaders for tool-calling agent logs: OpenAI transcripts (hand-written here) and tau-bench trajectories."""
from __future__ import annotations

import json

import pytest

from sage_core.corpora.agent_logs import load_agent_logs, read_openai_transcripts, read_tau_trajectories
from sage_core.data.errors import SageInputError

TOOLS = [
    {"type": "function", "function": {
        "name": "get_order", "description": "Look up an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
    {"type": "function", "function": {
        "name": "get_user", "description": "Look up a user.",
        "parameters": {"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}}},
    {"type": "function", "function": {
        "name": "cancel_order", "description": "Cancel an order.",
        "parameters": {"type": "object", "properties": {
            "order_id": {"type": "string"},
            "reason": {"type": "string", "enum": ["no longer needed", "ordered by mistake"]}},
            "required": ["order_id", "reason"]}}},
]


def call(cid, name, args, raw=None):
    return {"id": cid, "type": "function",
            "function": {"name": name, "arguments": raw if raw is not None else json.dumps(args)}}


def conversation(cid="c1"):
    return {"id": cid, "tools": TOOLS, "metadata": {"source": "unit"}, "messages": [
        {"role": "system", "content": "You are a shop agent."},
        {"role": "user", "content": "Please cancel order #W123, I ordered it by mistake. I'm user ann_1."},
        # parallel tool calls in one assistant message
        {"role": "assistant", "content": None, "tool_calls": [call("a", "get_user", {"user_id": "ann_1"}),
                                                               call("b", "get_order", {"order_id": "#W123"})]},
        {"role": "tool", "tool_call_id": "b", "content": '{"order_id": "#W123", "status": "pending"}'},
        {"role": "tool", "tool_call_id": "a", "content": "Error: user not found"},
        {"role": "assistant", "content": "Order #W123 is pending. Cancel it because it was ordered by mistake? (yes/no)"},
        {"role": "user", "content": "yes"},
        {"role": "assistant", "content": "", "tool_calls": [
            call("c", "cancel_order", {"order_id": "#W123", "reason": "ordered by mistake"})]},
        {"role": "tool", "tool_call_id": "c", "content": '{"status": "cancelled"}'},
        {"role": "assistant", "content": [{"type": "text", "text": "Done, it is cancelled."}]},
    ]}


def write(tmp_path, name, obj, jsonl=False):
    p = tmp_path / name
    if jsonl:
        p.write_text("\n".join(json.dumps(o) for o in obj) + "\n", encoding="utf-8")
    else:
        p.write_text(json.dumps(obj), encoding="utf-8")
    return p


def test_openai_transcript_parallel_calls_and_tool_errors_load(tmp_path):
    p = write(tmp_path, "t.jsonl", [conversation("c1"), conversation("c2")], jsonl=True)
    convs = read_openai_transcripts(p)
    assert [c.id for c in convs] == ["c1", "c2"]
    calls = convs[0].tool_calls
    assert [(c.name, c.position) for c in calls] == [("get_user", 0), ("get_order", 1), ("cancel_order", 0)]
    assert calls[0].is_error and calls[0].result == "Error: user not found"  # answered out of order
    assert not calls[1].is_error and calls[1].result_index == 3
    assert convs[0].meta["source"] == "unit"

    turns, registry = load_agent_logs("openai", p)  # tools from the transcripts themselves
    c1 = [t for t in turns if t.dialogue_id == "c1"]
    kinds = [(t.meta["step"]["kind"], t.meta["step"].get("tool")) for t in c1]
    assert kinds == [("tool_call", "get_user"), ("tool_call", "get_order"), ("reply", None),
                     ("tool_call", "cancel_order"), ("reply", None)]
    assert c1[0].meta["step"]["parallel"] and c1[0].meta["step"]["is_error"]
    cancel = c1[3]
    assert cancel.workflow == "tools:cancel_order"
    assert cancel.state_before == {} and cancel.state_after == {"order_id": "#W123", "reason": "ordered by mistake"}
    assert cancel.user == "yes"
    # tool outputs are history, with the tool's name; the error output is there too
    assert any(h.speaker == "tool" and h.text.startswith("[get_user] Error") for h in cancel.history)
    assert c1[-1].agent == "Done, it is cancelled." and c1[-1].meta["step"].get("last")
    assert "tools:reply" in registry and registry.get("tools:cancel_order").required == ["order_id", "reason"]


@pytest.mark.parametrize("mutate, needle", [
    (lambda c: c["messages"][2]["tool_calls"][0]["function"].__setitem__("arguments", '{"user_id": "ann_1"'),
     "message 2: malformed JSON arguments for get_user"),
    (lambda c: c["messages"][3].__setitem__("tool_call_id", "zzz"),
     "message 3: tool_call_id 'zzz' answers no earlier tool call"),
    (lambda c: c.__setitem__("messages", []), "empty conversation"),
    (lambda c: c["messages"][5].__setitem__("role", "bot"), "message 5: role must be one of"),
])
def test_malformed_transcripts_name_conversation_and_message(tmp_path, mutate, needle):
    good = conversation("good")
    bad = conversation("broken")
    mutate(bad)
    p = write(tmp_path, "t.jsonl", [good, bad], jsonl=True)
    with pytest.raises(SageInputError) as e:
        read_openai_transcripts(p)
    msg = str(e.value)
    assert "conversation 'broken'" in msg and needle in msg and "line 2" in msg and "t.jsonl" in msg


def test_answer_to_an_already_answered_call_is_an_error(tmp_path):
    c = conversation("twice")
    c["messages"].insert(4, {"role": "tool", "tool_call_id": "b", "content": "again"})
    with pytest.raises(SageInputError, match="message 4: tool_call_id 'b' answers no earlier tool call"):
        read_openai_transcripts(write(tmp_path, "t.json", [c]))


def test_unknown_tool_and_unknown_argument(tmp_path):
    c = conversation("u")
    c["messages"][7]["tool_calls"][0]["function"]["arguments"] = json.dumps(
        {"order_id": "#W123", "reason": "ordered by mistake", "refund_to": "gift_card_1"})
    turns, _ = load_agent_logs("openai", write(tmp_path, "t.json", c))
    cancel = next(t for t in turns if t.meta["step"].get("tool") == "cancel_order")
    assert cancel.meta["step"]["unknown_args"] == ["refund_to"] and "refund_to" not in cancel.state_after
    c["messages"][7]["tool_calls"][0]["function"]["name"] = "delete_everything"
    with pytest.raises(SageInputError, match="message 7: tool 'delete_everything' is not in the tools file"):
        load_agent_logs("openai", write(tmp_path, "t2.json", c))


def test_tau_bench_trajectories_keep_reference_in_meta_only(shared_data):
    d = shared_data / "tau_bench" / "airline"
    convs = read_tau_trajectories(d / "trajectories_gpt-4o.json")
    assert len(convs) == 100 and convs[0].id == "task0-trial0"
    assert sum(1 for c in convs if c.meta["reference"]["reward"] < 1) == 69
    turns, registry = load_agent_logs("tau-bench", d / "trajectories_gpt-4o.json", d / "tools.json",
                                      "data/specs/tau_bench_airline.yaml")
    assert {t.dialogue_id for t in turns} == {c.id for c in convs}
    t0 = [t for t in turns if t.dialogue_id == "task0-trial0"]
    book = next(t for t in t0 if t.workflow == "airline:book_reservation")
    assert book.state_after["passengers[0].first_name"] == "Mia"
    assert book.state_after["payment_methods[1].payment_id"] == "credit_card_4421486"
    gold = book.meta["reference"]["gold_actions"][0]["name"]
    assert gold == "book_reservation"
    # nothing an annotator sees carries the reference: not the texts, not the system prompt
    instruction = t0[0].meta["reference"]["instruction"]
    for t in t0:
        visible = json.dumps({k: v for k, v in t.to_dict().items() if k != "meta"})
        assert instruction[:40] not in visible and "reward" not in visible
        assert "Airline Agent Policy" not in visible  # system prompt excluded from history


def test_detect_kind_and_load_corpus_for_agent_logs(tmp_path, shared_data):
    from sage_core import detect_kind, load_corpus

    p = write(tmp_path, "t.jsonl", [conversation("c1")], jsonl=True)
    assert detect_kind(p) == "agent-openai"
    assert detect_kind(write(tmp_path, "t.json", [conversation("c1")])) == "agent-openai"
    turns, reg = load_corpus(None, p)  # tools from the transcript itself
    assert turns.stats.dialogues == 1 and "tools:cancel_order" in reg
    d = shared_data / "tau_bench" / "airline"
    assert detect_kind(d / "trajectories_gpt-4o.json") == "tau-bench"
    turns, reg = load_corpus(None, d / "trajectories_gpt-4o.json", "data/specs/tau_bench_airline.yaml")
    assert len({t.dialogue_id for t in turns}) == 100 and reg.get("airline:book_reservation").consequential


def test_app_upload_of_tau_bench_with_tools_and_policy(shared_data):
    from ui.loading import load_upload

    d = shared_data / "tau_bench" / "airline"
    raw = json.loads((d / "trajectories_gpt-4o.json").read_text(encoding="utf-8"))[:2]
    files = [("trajectories.json", json.dumps(raw).encode()), ("tools.json", (d / "tools.json").read_bytes())]
    pol = ("tau_bench_airline.yaml", open("data/specs/tau_bench_airline.yaml", "rb").read())
    ls = load_upload(None, files, pol)
    assert ls.kind == "tau-bench" and ls.n_dialogues == 2
    assert ls.registry.get("airline:cancel_reservation").consequential
    with pytest.raises(SageInputError, match="trajectories.json") as e:
        load_upload(None, [("trajectories.json", b'[{"task_id": 1, "traj": [{"role": "tool", "tool_call_id": "q", '
                                                  b'"content": "x"}]}]'), files[1]], pol)
    assert "sage_upload_" not in str(e.value)


def test_legacy_function_call_format_and_developer_role(tmp_path):
    c = {"id": "legacy", "messages": [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": "Cancel #W123, ordered by mistake."},
        {"role": "assistant", "content": None,
         "function_call": {"name": "get_order", "arguments": '{"order_id": "#W123"}'}},
        {"role": "function", "name": "get_order", "content": '{"status": "pending"}'},
        {"role": "assistant", "content": "It is pending; cancel it? (yes/no)"}]}
    conv = read_openai_transcripts(write(tmp_path, "legacy.json", [c]))[0]
    (call,) = conv.tool_calls
    assert call.name == "get_order" and call.result == '{"status": "pending"}' and call.result_index == 3
    assert [m.role for m in conv.messages] == ["system", "user", "assistant", "tool", "assistant"]
    c["messages"][3]["name"] = "get_user"
    with pytest.raises(SageInputError, match="message 3: function message 'get_user' answers no earlier"):
        read_openai_transcripts(write(tmp_path, "legacy2.json", [c]))
