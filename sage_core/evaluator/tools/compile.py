"""A tool step -> its criteria (UV per argument, IUV, PC, WNF, dropped requests, wishes)."""
from __future__ import annotations

import re
from typing import Any, Optional

from sage_core.data.tool_output import is_error_output
from sage_core.evaluator.text.lexicon import NEGATION
from sage_core.evaluator.text.sentences import sentences
from sage_core.evaluator.text.normalize import find_in_text, tokens
from sage_core.data.types import Criterion, FailureClass, Turn
from sage_core.evaluator.tools.context import (CALL_RE, EXPLICIT_YES, OUTPUT_RE, REQUEST_CUE, StepContext, WEAK_YES,
                                               argument_spec, keyword_stems, leaf, occurs)
from sage_core.evaluator.tools.margins import MARGIN_DROPPED, MARGIN_WNF_REPLY
from sage_core.evaluator.tools.preferences import option_preference_criteria, spending_limit_criteria
from sage_core.evaluator.tools.records import record_rule_criteria
from sage_core.evaluator.tools.user_requests import missing_prerequisites, phrase_in, user_requests


def compile_tool_step(turn: Turn, spec: Any) -> list[Criterion]:
    """All criteria of one agent step, in the order IUV, WNF, PC, UV."""
    step = turn.meta["step"]
    out: list[Criterion] = []

    def cid(kind: str, slot: Optional[str] = None) -> str:
        return f"{turn.turn_id}:{kind}" + (f":{slot}" if slot else "")

    ctx = StepContext.of(turn, spec)
    if step["kind"] == "reply":
        out.extend(_wnf_reply(turn, spec, cid))
        out.extend(_dropped_requests(turn, spec, ctx, cid))
        return out
    out.extend(_dropped_requests(turn, spec, ctx, cid))
    args = turn.state_after
    # IUV: the user's latest enum mentions
    for path, (value, sent) in sorted(user_enum_mentions(ctx, spec, args).items()):
        out.append(Criterion(cid("IUV", path), FailureClass.IUV,
                             {"slot": path, "value": value, "call_value": args.get(path, ""), "confidence": 0.9,
                              "tool_step": True, "rule": "enum_mention", "sentence": sent},
                             "user", None, f"the user asked for {path}={value!r}; the call has {args.get(path)!r}"))
    # WNF: prerequisites
    prereq = spec.policy.prerequisites(spec.tool)
    if prereq:
        missing = missing_prerequisites(prereq, {c.tool for c in ctx.calls if c.ok})
        out.append(Criterion(cid("WNF", spec.tool), FailureClass.WNF,
                             {"slot": spec.tool, "prerequisites": prereq, "missing": missing, "tool_step": True,
                              "rule": "prerequisite", "legal": []},
                             "agent", None, f"{spec.tool} is called before {missing or prereq} ran"))
    # WNF: one tool call per message, and no reply beside it (only where the policy says so)
    if spec.policy.one_call_per_message:
        out.append(_one_call(turn, spec, cid))
    # PC: consequential calls
    if spec.consequential:
        out.append(_pc(turn, spec, ctx, cid))
    # UV: one per argument value, plus unknown arguments and rejected write calls
    for path in sorted(args):
        value = args[path]
        if not str(value).strip() or spec.policy.is_free_text(path):
            continue
        sl = argument_spec(spec, path)
        out.append(Criterion(cid("UV", path), FailureClass.UV,
                             {"slot": path, "value": value, "value_type": sl.value_type if sl else "text",
                              "tool_step": True, "rule": "argument",
                              "grounding": spec.policy.grounding_tools(spec.tool, path)},
                             "state", None, f"the call writes {path}={value!r}, which no user message or tool "
                                            "output supports"))
    for path in step.get("unknown_args") or []:
        out.append(Criterion(cid("UV", path), FailureClass.UV,
                             {"slot": path, "value": "", "value_type": "text", "tool_step": True,
                              "rule": "unknown_argument"}, "state", None,
                             f"the call passes {path}, which the tool's schema does not define"))
    out.extend(record_rule_criteria(turn, spec, ctx, cid))
    out.extend(_must_ask(turn, spec, ctx, cid))
    out.extend(option_preference_criteria(turn, spec, ctx, cid))
    out.extend(spending_limit_criteria(turn, spec, ctx, cid))
    if spec.consequential and step.get("is_error"):
        out.append(Criterion(cid("UV", "(call)"), FailureClass.UV,
                             {"slot": "(call)", "value": "", "value_type": "text", "tool_step": True,
                              "rule": "rejected", "output": str(step.get("result") or "")[:300]}, "state", None,
                             "the tool rejected the call's arguments"))
    return out


def _one_call(turn: Turn, spec: Any, cid) -> Criterion:
    """The policy's "one tool call at a time; no reply to the user in the same message as a call".

    A call is out of turn when an earlier call of the same assistant message has not been answered yet
    (position > 0) or when the message also speaks to the user: the legal next event after a call is its
    answer. WNF, not PC: the failure is the order of the agent's actions (the issue's WNF, "out of the
    policy's order"), whether or not the call writes; a write listed and executed in one message is
    also caught by PC (the listing comes after u_t, so the user cannot have confirmed it).
    """
    step = turn.meta["step"]
    position = int(step.get("position") or 0)
    n_calls = int(step.get("calls_in_message") or (2 if step.get("parallel") else 1))
    with_reply = bool(step.get("with_reply"))
    return Criterion(cid("WNF", "one_call_per_message"), FailureClass.WNF,
                     {"slot": spec.tool, "tool_step": True, "rule": "one_call_per_message", "position": position,
                      "calls_in_message": n_calls, "with_reply": with_reply, "known": "with_reply" in step,
                      "legal": []},
                     "agent", None, f"{spec.tool} is called in a message that also "
                                    + ("replies to the user" if with_reply else "makes another call"))


def one_call_decision(a: dict) -> tuple[bool, str]:
    """(failure?, why) of a ``one_call_per_message`` criterion; a structural fact of the log."""
    if a["position"] > 0:
        return True, (f"call {a['position'] + 1} of {a['calls_in_message']} in one message: the policy allows one "
                      "tool call at a time")
    if a["with_reply"]:
        return True, "the message replies to the user and calls a tool at the same time, which the policy forbids"
    return False, ("the only call of its message, without a reply" if a.get("known", True)
                   else "the first call of its message (whether the message also replied is not recorded)")


def _must_ask(turn: Turn, spec: Any, ctx: StepContext, cid) -> list[Criterion]:
    """UV for an argument the policy says the agent must ask about ("should ask if the user wants ...") when
    no earlier reply of the agent and no user message raised it: its value then comes from neither."""
    out = []
    for key, words in spec.policy.must_ask.items():
        tool, _, arg = key.partition(".")
        if tool != spec.tool or arg not in turn.state_after:
            continue
        raised = next((w for w in words for t in ctx.agent_texts + ctx.user_texts if phrase_in(w, t)), None)
        out.append(Criterion(cid("UV", f"must_ask:{arg}"), FailureClass.UV,
                             {"slot": arg, "value": turn.state_after[arg], "value_type": "text", "tool_step": True,
                              "rule": "must_ask", "raised": raised, "words": list(words)},
                             "user", None, f"the policy says the agent must ask about {arg}; nobody raised it "
                                           "before the call"))
    return out


def _dropped_requests(turn: Turn, spec: Any, ctx: StepContext, cid) -> list[Criterion]:
    """At the dialogue's last step: every write the user asked for that no call carried out."""
    step = turn.meta["step"]
    if not step.get("last") or not spec.policy.request_words:
        return []
    done = {c.tool for c in ctx.calls if c.ok}
    if step["kind"] == "tool_call" and not step.get("is_error"):
        done.add(spec.tool)
    handed_off = bool(done & set(spec.policy.handoff)) or spec.tool in spec.policy.handoff
    out = []
    for tool, (sent, refused) in sorted(user_requests(turn, spec).items()):
        # the lookups the write needs (requires_called): a decline without them never checked the policy's conditions
        unchecked = missing_prerequisites(spec.policy.prerequisites(tool), done)
        out.append(Criterion(cid("IUV", f"request:{tool}"), FailureClass.IUV,
                             {"slot": f"request:{tool}", "value": tool, "sentence": sent, "done": tool in done,
                              "refused": refused, "handed_off": handed_off, "unchecked": unchecked,
                              "confidence": MARGIN_DROPPED,
                              "tool_step": True, "rule": "dropped_request"},
                             "user", None, f"the user asked for {tool} ({sent!r}); the dialogue ends without it"))
    return out


def user_enum_mentions(ctx: StepContext, spec: Any, args: dict[str, str]) -> dict[str, tuple[str, str]]:
    """slot -> (value, sentence): the latest unambiguous user mention of one of the slot's enum values."""
    found: dict[str, tuple[str, str]] = {}
    for path, sl in spec.slots.items():
        if not sl.is_categorical or not sl.possible_values or re.search(r"\[[1-9]\d*\]", path):
            continue
        if path not in args and not any(p.startswith(path) for p in args):
            continue
        pv = [str(v) for v in sl.possible_values]
        yes_no = {v.lower() for v in pv} == {"yes", "no"} or sl.value_type == "bool"
        for text in ctx.user_texts:  # later mentions overwrite earlier ones
            for sent, _ in sentences(text):
                low = sent.lower()
                if yes_no:
                    stems = keyword_stems(path)
                    if stems and any(w.startswith(s) for s in stems for w in tokens(sent)):
                        if NEGATION.search(sent):
                            val = "no" if "no" in [v.lower() for v in pv] else "false"
                        elif EXPLICIT_YES.search(sent) or re.search(r"\b(want|add|buy|include|would like)\b", low):
                            val = "yes" if "yes" in [v.lower() for v in pv] else "true"
                        else:
                            continue
                        found[path] = (next(v for v in pv if v.lower() == val), sent.strip())
                    continue
                hits = []
                for v in pv:
                    words = v.replace("_", " ").lower()
                    if re.search(r"(?<![a-z])" + re.escape(words) + r"(?![a-z])", low):
                        hits.append(v)
                # "basic economy" contains "economy": keep the longest, then require a single value
                hits = [h for h in hits if not any(h != o and h.replace("_", " ") in o.replace("_", " ")
                                                   for o in hits)]
                if len(hits) == 1 and not NEGATION.search(sent):
                    found[path] = (hits[0], sent.strip())
    return found


def listed_share(reply: str, spec: Any, args: dict[str, str]) -> tuple[float, int]:
    """Share of the call's checkable values (ids, names, dates, numbers, enum values) the reply states."""
    checkable = [(p, v) for p, v in args.items() if str(v).strip() and not spec.policy.is_free_text(p)]
    if not checkable:
        return 1.0, 0
    hit = 0
    for p, v in checkable:
        sl = argument_spec(spec, p)
        vt = sl.value_type if sl else "text"
        code = re.fullmatch(r"[A-Za-z_]+_(\d{3,})", v)  # credit_card_4421486 said as "card 4421486"
        if occurs(v, reply) or occurs(v.replace("_", " "), reply) or (code and occurs(code.group(1), reply)) or \
                (vt in ("date", "number") and find_in_text(v, reply, vt)) or \
                (vt == "categorical" and find_in_text(v.replace("_", " "), reply, "text")):
            hit += 1
    return hit / len(checkable), len(checkable)


def listing_since_last_write(turn: Turn, spec: Any) -> str:
    """The agent's replies before u_t since its last consequential call before u_t that took effect.

    Calls after u_t do not reset it: one "yes, all of them" may confirm several listed writes; nor does a
    write the tool rejected (it changed nothing, the user's confirmation still stands for the action).
    """
    consequential = set(spec.policy.consequential)
    out: list[str] = []
    pos = (turn.meta.get("step") or {}).get("u_t_position", len(turn.history))
    pending: list[str] = []  # consequential calls not yet answered
    for u in turn.history[:pos]:
        if u.speaker == "tool":
            m = OUTPUT_RE.match(u.text)
            if m and m.group(1) in pending:
                pending.remove(m.group(1))
                if not is_error_output(m.group(2)):  # a write that took effect closes the listing
                    out = []
            continue
        if u.speaker != "agent":
            continue
        m = CALL_RE.match(u.text)
        if m:
            if m.group(1) in consequential:
                pending.append(m.group(1))
            continue
        out.append(u.text)
    return "\n".join(out)


def _pc(turn: Turn, spec: Any, ctx: StepContext, cid) -> Criterion:
    args = turn.state_after
    missing = [r for r in spec.required if not str(args.get(r, "")).strip()]
    u = turn.user or ""
    explicit = bool(EXPLICIT_YES.search(u))
    weak = bool(WEAK_YES.search(u))
    negated = bool(re.match(r"^\W*(no|nope|wait|hold on|don'?t|do not)\b", u.strip(), re.I))
    listing = listing_since_last_write(turn, spec)
    share, n = listed_share(listing, spec, args)
    return Criterion(cid("PC"), FailureClass.PC,
                     {"missing": missing, "explicit_yes": explicit and not negated, "weak_yes": weak and not negated,
                      "listed_share": round(share, 3), "checkable": n, "listing": listing[-400:],
                      "user": u[:300], "tool_step": True, "rule": "confirmation",
                      "required": list(spec.required), "acts": ["COMMIT"]},
                     "user", None, f"{spec.tool} writes the database without the user's explicit confirmation "
                                   "of the listed details")


def requested_fields(text: str, spec: Any) -> list[tuple[str, str]]:
    """(field, sentence) for every ask_order field a question sentence of the reply asks for."""
    words = spec.policy.field_words
    fields = [f for g in spec.policy.ask_order for f in g]
    out = []
    for sent, _ in sentences(text):
        if not REQUEST_CUE.search(sent):
            continue
        low = " " + " ".join(tokens(sent)) + " "
        for f in fields:
            names = words.get(f) or [f.replace("_", " ")]
            if any(" " + " ".join(tokens(n)) + " " in low for n in names) and f not in [x for x, _ in out]:
                out.append((f, sent.strip()))
    return out


def known_fields(turn: Turn, spec: Any) -> set[str]:
    """Fields the agent has by now: a call used them, a tool output holds them, the user named or answered them."""
    ctx = StepContext.of(turn, spec)
    known: set[str] = set()
    fields = {f for g in spec.policy.ask_order for f in g}
    for c in ctx.calls:
        known |= {leaf(p) for p in _flat_keys(c.args)} & fields
    for _, out in ctx.tool_outputs:
        known |= {f for f in fields if f'"{f}"' in out}
    for reply, answer in ctx.replies_then_user:  # asked, and the user answered
        known |= {f for f, _ in requested_fields(reply, spec)}
    for t in ctx.user_texts[:-1] if turn.user.strip() else ctx.user_texts:
        low = " " + " ".join(tokens(t)) + " "
        for f in fields:
            names = spec.policy.field_words.get(f) or [f.replace("_", " ")]
            if any(" " + " ".join(tokens(n)) + " " in low for n in names):
                known.add(f)
    if turn.user.strip():
        low = " " + " ".join(tokens(turn.user)) + " "
        for f in fields:
            names = spec.policy.field_words.get(f) or [f.replace("_", " ")]
            if any(" " + " ".join(tokens(n)) + " " in low for n in names):
                known.add(f)
    return known


def _flat_keys(v: Any, prefix: str = "") -> list[str]:
    if isinstance(v, dict):
        return [k for key, x in v.items() for k in _flat_keys(x, f"{prefix}.{key}" if prefix else key)]
    if isinstance(v, list):
        return [k for i, x in enumerate(v) for k in _flat_keys(x, f"{prefix}[{i}]")]
    return [prefix] if prefix else []


def _wnf_reply(turn: Turn, spec: Any, cid) -> list[Criterion]:
    order = spec.policy.ask_order
    if not order:
        return []
    asked = requested_fields(turn.agent, spec)
    if not asked:
        return []
    known = known_fields(turn, spec) | {f for f, _ in asked}  # asking for several fields at once is in order
    out = []
    for f, sent in asked:
        gi = next(i for i, g in enumerate(order) if f in g)
        open_before = [g for g in order[:gi] if not any(x in known for x in g)]
        out.append(Criterion(cid("WNF", f), FailureClass.WNF,
                             {"slot": f, "confidence": MARGIN_WNF_REPLY, "tool_step": True, "rule": "ask_order",
                              "open_before": [list(g) for g in open_before], "sentence": sent,
                              "legal": sorted({x for g in order[:gi + 1] for x in g} - known) if not open_before
                              else sorted(open_before[0])},
                             "agent", None, f"the agent asks for {f} before {open_before[0] if open_before else []}"))
    return out
