"""S3Verifier against the real local server: decisions, strict parsing, focused prompts."""
from __future__ import annotations

import pytest

from sage_core.data.types import (
    Criterion,
    Decision,
    FailureClass,
    Stage,
    Turn,
    Utterance,
)
from sage_core.evaluator.verify.s3 import S3Verifier
from sage_core.llm.client import LLMClient
from sage_core.specs.workflow import SlotSpec, WorkflowSpec
from tests.llm_server import llm_server  # noqa: F401 (fixture)

SPEC = WorkflowSpec(
    id="Restaurants_1:ReserveRestaurant", service="Restaurants_1", intent="ReserveRestaurant",
    description="Reserve a table",
    slots={s: SlotSpec(s, d) for s, d in (("restaurant_name", "Name of the restaurant"),
                                          ("city", "City where the restaurant is"),
                                          ("time", "Time of the reservation"),
                                          ("party_size", "Number of people"))},
    required=["restaurant_name", "city", "time"], optional={"party_size": "2"})

USER = "Book Luigi's in San Jose at 7 pm please."
TURN = Turn(
    turn_id="d1-t2", dialogue_id="d1", workflow=SPEC.id,
    history=[Utterance("user", "I want a table somewhere nice."),
             Utterance("agent", "Which restaurant would you like? HISTORY_MARKER")],
    user=USER, agent="Great, how many people? AGENT_MARKER",
    state_before={}, state_after={"restaurant_name": "Luigi's", "city": "Sacramento", "time": "19:00"})

IUV = Criterion("d1-t2:IUV:city", FailureClass.IUV, {"slot": "city", "value": "San Jose"}, "user",
                span=(USER.index("San Jose"), USER.index("San Jose") + 8),
                text="The user said city San Jose but the state does not hold it.")
UV = Criterion("d1-t2:UV:time", FailureClass.UV, {"slot": "time", "value": "19:00"}, "state")
WNF = Criterion("d1-t2:WNF:party_size", FailureClass.WNF, {"slot": "party_size"}, "agent")
PC = Criterion("d1-t2:PC", FailureClass.PC, {"missing": ["time"]}, "agent")


def verifier(srv, tmp_path, **kw):
    return S3Verifier(LLMClient("gpt-4.1-mini", srv.base_url, "k", tmp_path / "c"), **kw)


@pytest.mark.parametrize("answer,decision,conf", [
    ('{"answer": "true", "confidence": 0.9}', Decision.TRUE, 0.9),
    ('{"answer": "false", "confidence": 0.75}', Decision.FALSE, 0.75),
    ('{"answer": "abstain", "confidence": 0.2}', Decision.ABSTAIN, 0.2),
    ('```json\n{"answer": "TRUE", "confidence": 1}\n```', Decision.TRUE, 1.0),
])
def test_decisions(llm_server, tmp_path, answer, decision, conf):
    llm_server.add_rule(r"Claim \(IUV\)", answer)
    v, usage = verifier(llm_server, tmp_path).verify(IUV, TURN, SPEC)
    assert v.decision == decision and v.margin == pytest.approx(conf) and v.stage == Stage.S3
    assert v.evidence == "San Jose"
    assert usage.prompt_tokens > 0 and usage.cost_usd > 0 and not usage.cached


@pytest.mark.parametrize("answer,why", [
    ("Yes, the failure is present.", "not JSON"),
    ('{"answer": "maybe", "confidence": 0.9}', "true|false|abstain"),
    ('{"answer": true, "confidence": 0.9}', "true|false|abstain"),
    ('{"answer": "true", "confidence": 1.7}', "confidence"),
    ('{"answer": "true"}', "confidence"),
    ('["true", 0.9]', "not an object"),
    ('{"answer": "true", "confidence": 0.9} and some chatter', "not JSON"),
])
def test_malformed_answers_abstain_with_rationale(llm_server, tmp_path, answer, why):
    llm_server.add_rule(r"Claim", answer)
    v, _ = verifier(llm_server, tmp_path).verify(IUV, TURN, SPEC)
    assert v.decision == Decision.ABSTAIN and v.margin == 0.0
    assert "unparsable" in v.rationale and why in v.rationale


def test_low_confidence_gate(llm_server, tmp_path):
    llm_server.add_rule(r"Claim", '{"answer": "true", "confidence": 0.4}')
    v, _ = verifier(llm_server, tmp_path, min_confidence=0.6).verify(IUV, TURN, SPEC)
    assert v.decision == Decision.ABSTAIN and "0.40 < 0.60" in v.rationale


def test_prompts_hold_only_the_criterion_context(llm_server, tmp_path):
    llm_server.default = '{"answer": "false", "confidence": 0.8}'
    s3 = verifier(llm_server, tmp_path)
    for crit in (IUV, UV, WNF, PC):
        s3.verify(crit, TURN, SPEC)
    iuv, uv, wnf, pc = (r.messages[1]["content"] for r in llm_server.requests)
    # IUV: user span + state value, no history and no agent reply
    assert '"San Jose"' in iuv and '"Sacramento"' in iuv and "City where the restaurant is" in iuv
    assert "HISTORY_MARKER" not in iuv and "AGENT_MARKER" not in iuv
    # UV: value plus history and u_t, not the agent reply
    assert 'time = "19:00"' in uv and "HISTORY_MARKER" in uv and USER in uv and "AGENT_MARKER" not in uv
    # WNF: the reply and the legal-next slots of s_{t-1}
    assert "AGENT_MARKER" in wnf and "city, party_size, restaurant_name, time" in wnf
    # PC: the reply and the missing slots
    assert "AGENT_MARKER" in pc and "Required slots still empty: time" in pc
    assert all("Claim (" + c.type.value + ")" in p for c, p in zip((IUV, UV, WNF, PC), (iuv, uv, wnf, pc)))
    assert all(r.temperature == 0.0 and r.n == 1 for r in llm_server.requests)


def test_repeat_is_served_from_cache(llm_server, tmp_path):
    llm_server.add_rule(r"Claim", '{"answer": "true", "confidence": 0.9}')
    s3 = verifier(llm_server, tmp_path)
    s3.verify(UV, TURN, SPEC)
    v, usage = s3.verify(UV, TURN, SPEC)
    assert llm_server.count() == 1 and usage.cached and usage.paid_calls == 0 and v.decision == Decision.TRUE


def test_unknown_prompt_version():
    with pytest.raises(ValueError, match="v9"):
        S3Verifier(LLMClient("m", "http://127.0.0.1:9/v1", "k", None), prompt_version="v9")


def test_wnf_reconfirmation_and_uv_replacement_context(llm_server, tmp_path):
    llm_server.default = '{"answer": "false", "confidence": 0.8}'
    s3 = verifier(llm_server, tmp_path)
    wnf = Criterion("x:WNF:city", FailureClass.WNF,
                    {"slot": "city", "legal": ["time"], "just_supplied": True, "filled_after": False}, "agent")
    uv = Criterion("x:UV:city", FailureClass.UV, {"slot": "city", "value": "Sacramento", "previous": "Oakland"},
                   "state")
    s3.verify(wnf, TURN, SPEC)
    s3.verify(uv, TURN, SPEC)
    wp, up = (r.messages[1]["content"] for r in llm_server.requests)
    assert "legally ask for next: time\n" in wp and "(it lacks it)" in wp
    assert '(it replaces the earlier value "Oakland")' in up


def test_every_compiled_criterion_gets_a_focused_prompt(llm_server, tmp_path):
    from sage_core.data.types import AgentAct, UserValue
    from sage_core.evaluator import compile as compiler
    llm_server.default = '{"answer": "true", "confidence": 0.7}'
    t = Turn("d2-t1", "d2", SPEC.id, [], USER, "Please confirm your table for 4 people?",
             state_before={}, state_after={"restaurant_name": "Luigi's", "city": "Sacramento"},
             user_values=[UserValue("city", "San Jose", (USER.index("San Jose"), USER.index("San Jose") + 8))],
             agent_acts=[AgentAct("REQUEST", "party_size"), AgentAct("CONFIRM")])
    crits = compiler.compile_turn(t, SPEC)
    assert {c.type for c in crits} >= {FailureClass.IUV, FailureClass.UV, FailureClass.PC}
    s3 = verifier(llm_server, tmp_path)
    for c in crits:
        v, usage = s3.verify(c, t, SPEC)
        assert v.decision == Decision.TRUE and v.stage == Stage.S3 and usage.paid_calls == 1
    assert llm_server.count() == len(crits)
    assert all(f"Claim ({c.type.value})" in r.messages[1]["content"] for c, r in zip(crits, llm_server.requests))


def test_cascade_sends_abstentions_to_s3(llm_server, tmp_path):
    """Contract with the core cascade (config sage-llm): S3 decides what S1/S2 abstained on."""
    from sage_core.evaluator import cascade
    from sage_core.specs.workflow import WorkflowRegistry
    llm_server.add_rule(r"Claim \(UV\)", '{"answer": "true", "confidence": 0.9}')
    llm_server.default = '{"answer": "false", "confidence": 0.8}'
    cfg = cascade.CascadeConfig.named("sage-llm", s2_backend="offline", tau=1.01, s3_open_class=("all",))
    ev = cascade.Evaluator(WorkflowRegistry([SPEC]), cfg, s3=verifier(llm_server, tmp_path))
    v = ev.evaluate([TURN])[0]
    assert v.traces and all(t.final.stage == Stage.S3 for t in v.traces)
    assert v.label.value == "failure" and v.paid_calls == llm_server.count() == len(v.traces)
    uv = [t for t in v.traces if t.criterion.type == FailureClass.UV]
    assert uv and all(t.final.decision == Decision.TRUE for t in uv)
    again = cascade.Evaluator(WorkflowRegistry([SPEC]), cfg, s3=verifier(llm_server, tmp_path)).evaluate([TURN])[0]
    assert again.paid_calls == 0 and llm_server.count() == len(v.traces)  # replayed from the cache
