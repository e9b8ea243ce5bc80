"""S1 and S2 (symbolic) verdicts on tool-step criteria."""
from __future__ import annotations

from typing import Any

from sage_core.evaluator.text.normalize import find_in_text, parse_number
from sage_core.data.types import Criterion, Decision, FailureClass, Stage, Turn, Verdict
from sage_core.evaluator.tools.compile import one_call_decision
from sage_core.evaluator.tools.context import (EXPLICIT_YES, ID_LIKE, StepContext, WEAK_YES, argument_spec,
                                               json_key_value, leaf, near_keyword, occurs, occurs_number)
from sage_core.evaluator.verify.decision import decide
from sage_core.evaluator.tools.margins import (LISTED_SHARE, MARGIN_DROPPED, MARGIN_IUV, MARGIN_IUV_AGREES,
                                               MARGIN_LISTED_ACCEPTED, MARGIN_NEAR_KEYWORD, MARGIN_PC_WEAK,
                                               MARGIN_PREFERENCE, MARGIN_TYPED_MATCH, MARGIN_UNSUPPORTED_NUMBER,
                                               MARGIN_WNF_REPLY)


def _v(decision: Decision, why: str, evidence: str = "") -> Verdict:
    return Verdict(decision, 1.0, Stage.S1, evidence, why)


def _abstain(stage: Stage, why: str) -> Verdict:
    return Verdict(Decision.ABSTAIN, 0.0, stage, "", why)


def verify_tool_step_s1(c: Criterion, turn: Turn, spec: Any) -> Verdict:
    rule = c.args.get("rule")
    if c.type == FailureClass.PC:
        a = c.args
        if a["missing"]:
            return _v(Decision.TRUE, f"required arguments {a['missing']} are missing", "agent")
        if not a["explicit_yes"] and not a["weak_yes"]:
            return _v(Decision.TRUE, "the user's latest message holds no confirmation", "user")
        if a["explicit_yes"] and (a["listed_share"] >= LISTED_SHARE or a["checkable"] == 0):
            return _v(Decision.FALSE, f"explicit 'yes' after the agent listed {a['listed_share']:.0%} of the call's "
                                      "values", "user")
        return _abstain(Stage.S1, "confirmation implicit or details only partly listed")
    if rule == "dropped_request":
        if c.args["done"]:
            return _v(Decision.FALSE, f"{c.args['value']} was carried out", "agent")
        return _abstain(Stage.S1, "the request was not carried out; whether it was declined needs the text (S2)")
    if rule in ("option_preference", "spending_limit"):
        return _abstain(Stage.S1, "whether the user's stated wish binds this call needs the text (S2)")
    if rule == "one_call_per_message":
        bad, why = one_call_decision(c.args)
        return _v(Decision.TRUE if bad else Decision.FALSE, why, "agent")
    if c.type == FailureClass.WNF and rule == "prerequisite":
        if c.args["missing"]:
            return _v(Decision.TRUE, f"prerequisite call(s) {c.args['missing']} have not run", "agent")
        return _v(Decision.FALSE, f"prerequisites {c.args['prerequisites']} ran before", "agent")
    if c.type == FailureClass.UV:
        if rule == "unknown_argument":
            return _v(Decision.TRUE, f"{c.args['slot']} is not a parameter of the tool", "state")
        if rule == "must_ask":
            if c.args["raised"]:
                return _v(Decision.FALSE, f"{c.args['slot']} was raised before the call ({c.args['raised']!r})", "agent")
            return _v(Decision.TRUE, f"the policy says to ask about {c.args['slot']}, and no reply or user message "
                                     f"before the call mentions {c.args['words']}", "agent")
        if rule == "record_rule":
            if c.args["violated"] is None:
                return _abstain(Stage.S1, c.args["why"])
            return _v(Decision.TRUE if c.args["violated"] else Decision.FALSE, c.args["why"], "tool")
        if rule == "rejected":
            return _v(Decision.TRUE, f"the tool answered with an error: {c.args.get('output', '')[:120]}", "tool")
        return _uv_s1(c, turn, spec)
    return _abstain(Stage.S1, "extracted evidence: S1 decides only exact cases")


def _uv_s1(c: Criterion, turn: Turn, spec: Any) -> Verdict:
    ctx = StepContext.of(turn, spec)
    path, value = c.args["slot"], str(c.args["value"])
    sl = argument_spec(spec, path)
    if sl is not None and sl.is_categorical and sl.possible_values:
        if value not in [str(v) for v in sl.possible_values]:
            return _v(Decision.TRUE, f"{value!r} is not one of {sl.possible_values}", "state")
    grounding = c.args.get("grounding")
    if grounding is not None:
        srcs = ctx.outputs_of(grounding)
        if any(occurs(value, o) for o in srcs):
            return _v(Decision.FALSE, f"{value!r} is in the output of {grounding}", "tool")
        return _v(Decision.TRUE, f"{value!r} is in no output of {grounding}, where the policy says it must come from",
                  "tool")
    small = (sl is not None and sl.value_type == "number") and (parse_number(value) or 0) < 10
    if not small:
        for t in ctx.user_texts:
            if occurs(value, t):
                return _v(Decision.FALSE, f"{value!r} is in the user's words", "user")
        for _, o in ctx.tool_outputs:
            if occurs(value, o):
                return _v(Decision.FALSE, f"{value!r} is in a tool output", "tool")
    else:
        for _, o in ctx.tool_outputs:
            if json_key_value(path, value, o):
                return _v(Decision.FALSE, f"a tool output holds {leaf(path)}={value}", "tool")
    if ID_LIKE.match(value) and not (sl is not None and sl.value_type in ("number", "date")):
        return _v(Decision.TRUE, f"{value!r} is a code no user message or tool output contains", "state")
    return _abstain(Stage.S1, "support needs typed or nearby evidence (S2)")


def _wish_verdict(a: dict[str, Any], tau: float, broken: str, kept: str) -> Verdict:
    """A stated wish of the user (preference, time window, spending cap) the call breaks or keeps, at
    ``MARGIN_PREFERENCE``, with the tool's answer or searches as the evidence."""
    return decide(-MARGIN_PREFERENCE if a["violated"] else MARGIN_PREFERENCE, tau, broken if a["violated"] else kept,
                   "tool")


def verify_tool_step_s2(c: Criterion, turn: Turn, spec: Any, tau: float) -> Verdict:
    a = c.args
    if c.type == FailureClass.PC:
        if a["explicit_yes"]:
            return decide(-MARGIN_PC_WEAK, tau, f"explicit 'yes', but the agent had listed only "
                                                 f"{a['listed_share']:.0%} of the call's values", "user")
        # implicit agreement ("sure", "ok"): acceptable only after a full listing
        m = MARGIN_PC_WEAK if a["listed_share"] >= LISTED_SHARE else -MARGIN_PC_WEAK
        return decide(m, tau, f"implicit confirmation after a listing of {a['listed_share']:.0%}", "user")
    if a.get("rule") == "dropped_request":
        if (a["refused"] or a["handed_off"]) and a.get("unchecked"):
            return decide(-MARGIN_DROPPED, tau, f"the user asked for {a['value']} ({a['sentence']!r}); the agent "
                                                 f"declined or handed off without ever looking up {a['unchecked']}, "
                                                 "so it never checked whether the policy allows it", "agent")
        if a["refused"] or a["handed_off"]:
            return decide(0.0, tau, f"{a['value']} was not carried out, but the agent declined or handed off after "
                                     "looking up what the policy's conditions need: whether that was right needs "
                                     "those conditions")
        return decide(-MARGIN_DROPPED, tau, f"the user asked for {a['value']} ({a['sentence']!r}); no call carried it "
                                             "out and the agent neither declined nor handed off", "user")
    if a.get("rule") == "spending_limit":
        return _wish_verdict(a, tau, f"the user would pay at most {a['value']} ({a['sentence']!r}); the call's answer "
                                     f"shows a charge of {a['charge']:g}",
                             f"the call charges {a['charge']:g}, within the {a['value']} the user would pay")
    if a.get("rule") == "option_preference" and a.get("least") == "@window":
        return _wish_verdict(a, tau, f"the user asked for a {a['value']} ({a['sentence']!r}); the call picks {a['why']}",
                             f"the user asked for a {a['value']}; the call's options fit it")
    if a.get("rule") == "option_preference":
        return _wish_verdict(a, tau, f"the user asked for the {a['value']} option ({a['sentence']!r}); the call picks "
                                     f"{a['why']}", f"the user asked for the {a['value']} option; no option the same "
                                                    "searches returned beats the call's on it")
    if c.type == FailureClass.IUV:
        if str(a["call_value"]).lower() == str(a["value"]).lower():
            return decide(MARGIN_IUV_AGREES, tau, f"the call keeps the user's {a['value']!r}", "user")
        return decide(-MARGIN_IUV, tau, f"the user said {a['sentence']!r}; the call has {a['call_value']!r}", "user")
    if a.get("rule") == "one_call_per_message":  # structural: the same answer as S1 (leave-one-out configs)
        bad, why = one_call_decision(a)
        return decide(-1.0 if bad else 1.0, tau, why, "agent")
    if c.type == FailureClass.WNF and a.get("rule") == "prerequisite":
        return decide(-1.0 if a["missing"] else 1.0, tau, f"prerequisites missing: {a['missing']}" if a["missing"]
                       else f"prerequisites {a['prerequisites']} ran before", "agent")
    if c.type == FailureClass.WNF:
        if a.get("open_before"):
            return decide(-MARGIN_WNF_REPLY, tau, f"asks for {a['slot']} while {a['open_before'][0]} is not known",
                           "agent")
        return decide(MARGIN_WNF_REPLY, tau, f"{a['slot']} is next in the policy's order", "agent")
    if a.get("rule") == "must_ask":
        return decide(1.0 if a["raised"] else -1.0, tau, f"{a['slot']} raised before: {a['raised']!r}", "agent")
    if a.get("rule") == "record_rule":
        if a["violated"] is None:
            return decide(0.0, tau, a["why"])
        return decide(-1.0 if a["violated"] else 1.0, tau, a["why"], "tool")
    if c.type == FailureClass.UV:
        return _uv_s2(c, turn, spec, tau)
    return decide(0.0, tau, "no S2 rule")


def _uv_s2(c: Criterion, turn: Turn, spec: Any, tau: float) -> Verdict:
    ctx = StepContext.of(turn, spec)
    path, value, vt = c.args["slot"], str(c.args["value"]), c.args.get("value_type", "text")
    texts = [("user", t) for t in ctx.user_texts] + [("tool", o) for _, o in ctx.tool_outputs]
    if vt in ("date", "time"):
        for who, t in texts:
            if find_in_text(value, t, vt):
                return decide(MARGIN_TYPED_MATCH, tau, f"{value!r} is stated in a {who} text", who)
    if vt == "number":
        small = (parse_number(value) or 0) < 10
        for who, t in texts:
            if near_keyword(value, t, path):
                return decide(MARGIN_NEAR_KEYWORD, tau, f"{value} is stated next to '{leaf(path)}' in a {who} text", who)
            if not small and occurs_number(value, t):
                return decide(MARGIN_TYPED_MATCH, tau, f"{value} is stated in a {who} text", who)
    if vt == "categorical" and sl_text_found(value.replace("_", " "), texts):  # one_way said as "one-way"
        return decide(MARGIN_TYPED_MATCH, tau, f"{value!r} is stated (normalised) in the dialogue", "user")
    if vt == "text" and sl_text_found(value, texts):
        return decide(MARGIN_TYPED_MATCH, tau, f"{value!r} is stated (normalised) in the dialogue", "user")
    for reply, answer in ctx.replies_then_user:  # the agent stated it and the user agreed
        stated = occurs(value, reply) or (vt in ("date", "number") and find_in_text(value, reply, vt)) or \
            (vt == "number" and near_keyword(value, reply, path))
        if stated and (EXPLICIT_YES.search(answer) or WEAK_YES.search(answer)):
            return decide(MARGIN_LISTED_ACCEPTED, tau, f"the agent stated {value!r} and the user agreed", "user")
    if vt == "number":
        return decide(-MARGIN_UNSUPPORTED_NUMBER, tau, f"no user message or tool output states {leaf(path)}={value}")
    return decide(0.0, tau, f"{value!r} is not found verbatim; paraphrase support needs an encoder")


def sl_text_found(value: str, texts: list[tuple[str, str]]) -> bool:
    return any(find_in_text(value, t, "text") for _, t in texts)
