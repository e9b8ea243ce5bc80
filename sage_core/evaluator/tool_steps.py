"""Criteria and verifiers for the steps of a tool-calling agent (one tool call, or one reply to the user).

Generic: everything corpus-specific comes from the ``ToolWorkflowSpec`` (tool
schema + our policy YAML). Turn semantics (README, "Tool-calling agents"):
s_t is the agent's committed arguments, Delta_t this call's arguments, and the
history holds the user's messages, the agent's earlier replies and calls, and
the tool outputs (``[tool_name] output``).

- **UV** (one per argument value): supported when the user said it or a tool
  output holds it (only the policy's tools, where the policy restricts an
  argument's grounding: "payment methods must already be in the profile").
  S1 decides the exact cases: an enum value outside the enum, an exact
  occurrence (supported), an id-like code or a restricted argument found
  nowhere it may come from (unsupported), an argument the schema does not
  define, a write call the tool rejected, a policy ``record_rules`` check of
  the call against the record a lookup returned (bags only added, the same
  number of passengers, a cancellation the policy allows). S2 decides typed and nearby evidence
  (a date said as "May 20th", a count next to its noun, a value the agent
  listed and the user then accepted).
- **IUV** (S2, extracted evidence): the user's latest mention of an enum value
  of an argument (including "no insurance" for a yes/no argument) that the call
  contradicts.
- **PC** (consequential calls only): required arguments missing (S1); no
  explicit confirmation in the user's latest message (S1); an explicit "yes"
  after the agent listed the call's details (S1 acceptable); anything in between
  goes to S2 with a margin from how much of the call the agent had listed.
- **WNF**: a call whose policy prerequisites (tools that must have run first)
  have not run (S1); with ``one_call_per_message`` in the policy, a call that
  shares its assistant message with an earlier call or with a reply to the
  user (S1, from the log's structure); a reply that asks for a field before the fields the
  policy's ``ask_order`` puts first are known (S2, the request is extracted).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Callable, Optional

from sage_core.data.tool_output import is_error_output
from sage_core.evaluator.text.lexicon import NEGATION
from sage_core.evaluator.text.sentences import sentences
from sage_core.evaluator.text.spending_limits import stated_limit
from sage_core.evaluator.text.time_windows import TimeWindow, stated_window
from sage_core.evaluator.text.normalize import find_in_text, iter_numbers, parse_number, tokens
from sage_core.specs.from_tools import ToolWorkflowSpec
from sage_core.data.types import Criterion, Decision, FailureClass, Stage, Turn, Verdict

# The S2 margins of this module are hand-set constants on the margin scale (named so reports can say so).
MARGIN_TYPED_MATCH = 0.8  # a date / number / name found in a user message or tool output after normalisation
MARGIN_NEAR_KEYWORD = 0.6  # a count found next to its noun ("3 bags")
MARGIN_LISTED_ACCEPTED = 0.5  # the agent stated the value and the user then answered affirmatively
MARGIN_UNSUPPORTED_NUMBER = 0.5  # a quantity no text supports
MARGIN_IUV = 0.6  # the user's latest mention of an enum value differs from the call's
MARGIN_IUV_AGREES = 0.8
MARGIN_PC_WEAK = 0.5  # confirmation only implicit ("sure", "please do") or details only partly listed
MARGIN_WNF_REPLY = 0.6  # a request extracted from the reply text
MARGIN_DROPPED = 0.6  # the user asked for a write that no call carried out, and the agent neither refused nor handed off
MARGIN_PREFERENCE = 0.6  # the user's stated preference ("the cheapest") against the options the agent's searches returned
LISTED_SHARE = 0.5  # share of the call's checkable values the agent's listing must restate

EXPLICIT_YES = re.compile(r"\b(yes|yeah|yep|yup|confirm|confirmed|i confirm|proceed|go ahead|do it|approved?)\b", re.I)
WEAK_YES = re.compile(r"\b(sure|ok|okay|alright|sounds good|that works|please do|correct|right|fine|great|perfect|"
                      r"let'?s do|book it|cancel it)\b", re.I)
REFUSAL_CUE = re.compile(r"\b(not eligible|ineligible|cannot|can'?t|unable to|not able to|not possible|not allowed|"
                         r"not permitted|against (?:our|the) policy|per (?:our|the) policy|i'?m sorry, but|"
                         r"unfortunately)\b", re.I)
REQUEST_CUE = re.compile(r"\?|\b(please (provide|share|confirm|let me know|tell)|could you|can you|may i (have|know)|"
                         r"i(?:'ll| will) need|i need|let me know)\b", re.I)
CALL_RE = re.compile(r"^\[call\] (\w+)\((.*)\)\s*$", re.S)
OUTPUT_RE = re.compile(r"^\[(\w+)\] (.*)$", re.S)
ID_LIKE = re.compile(r"^(?=.*\d)[A-Za-z0-9#_\-.@]{4,}$|^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+$")


def is_tool_step(turn: Turn, spec: Any) -> bool:
    """A step of a tool-calling agent judged by a tool workflow (the loader's ``meta["step"]`` says which kind)."""
    return isinstance(spec, ToolWorkflowSpec) and isinstance((turn.meta or {}).get("step"), dict) \
        and turn.meta["step"].get("kind") in ("reply", "tool_call")


def json_or_none(text: Optional[str]) -> Any:
    """``text`` parsed as JSON; None when it is not JSON."""
    try:
        return json.loads(text or "")
    except ValueError:
        return None


@dataclass
class PriorCall:
    tool: str
    args: dict[str, Any]
    output: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.output is not None and not is_error_output(self.output)

    def json_answer(self) -> Any:
        """The tool's answer parsed as JSON; None when it is not JSON."""
        return json_or_none(self.output)


@dataclass
class StepContext:
    """The history of one step split by source (what supports what)."""

    turn: Turn
    spec: Any
    user_texts: list[str] = field(default_factory=list)  # oldest first, u_t last
    tool_outputs: list[tuple[str, str]] = field(default_factory=list)  # (tool, output), successful answers
    agent_texts: list[str] = field(default_factory=list)  # earlier replies to the user
    calls: list[PriorCall] = field(default_factory=list)
    replies_then_user: list[tuple[str, str]] = field(default_factory=list)  # (agent reply, the user's answer)

    @classmethod
    def of(cls, turn: Turn, spec: Any) -> "StepContext":
        ctx = cls(turn, spec)
        pending: list[PriorCall] = []
        last_reply: Optional[str] = None
        for u in turn.history:
            if u.speaker == "user":
                ctx.user_texts.append(u.text)
                if last_reply is not None:
                    ctx.replies_then_user.append((last_reply, u.text))
                    last_reply = None
            elif u.speaker == "tool":
                m = OUTPUT_RE.match(u.text)
                name, out = (m.group(1), m.group(2)) if m else ("tool", u.text)
                call = next((c for c in pending if c.tool == name), None)
                if call is not None:
                    pending.remove(call)
                    call.output = out
                if not is_error_output(out):
                    ctx.tool_outputs.append((name, out))
            else:
                m = CALL_RE.match(u.text)
                if m:
                    args = json_or_none(m.group(2))
                    pc = PriorCall(m.group(1), args if isinstance(args, dict) else {})
                    ctx.calls.append(pc)
                    pending.append(pc)
                else:
                    ctx.agent_texts.append(u.text)
                    last_reply = u.text
        if turn.user.strip():
            ctx.user_texts.append(turn.user)
            if last_reply is not None:
                ctx.replies_then_user.append((last_reply, turn.user))
        return ctx

    def outputs_of(self, tools: Optional[list[str]]) -> list[str]:
        if tools is None:
            return [o for _, o in self.tool_outputs]
        allowed = {t for alt in tools for t in alt.split("|")}
        return [o for name, o in self.tool_outputs if name in allowed]


def occurs(value: str, text: str) -> bool:
    """Exact, case-insensitive occurrence of ``value`` as a whole token sequence (ids, codes, names)."""
    v = value.strip()
    if not v or not text:
        return False
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(v) + r"(?![A-Za-z0-9_])", text, re.I) is not None


def occurs_number(value: str, text: str) -> bool:
    n = parse_number(value)
    if n is None:
        return False
    return any(abs(x - n) < 1e-9 for x, _ in iter_numbers(text)) or \
        any(abs(float(m.group(0)) - n) < 1e-9 for m in re.finditer(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])", text))


def leaf(path: str) -> str:
    return re.sub(r"\[\d+\]", "", path.split(".")[-1])


def keyword_stems(path: str) -> list[str]:
    """Words that name an argument ("nonfree_baggages" -> ["nonfree", "bag"]), 3+ letter stems."""
    out = []
    for w in re.split(r"[_\W]+", leaf(path).lower()):
        if len(w) >= 3:
            out.append(w[:3] if w.startswith("bag") else w.rstrip("s")[:max(3, len(w) - 2)])
    return out


def near_keyword(value: str, text: str, path: str, window: int = 6) -> bool:
    """A number stated within ``window`` tokens of a word naming the argument."""
    n = parse_number(value)
    stems = keyword_stems(path)
    if n is None or not stems:
        return False
    toks = tokens(text)
    for i, t in enumerate(toks):
        if parse_number(t) == n:
            ctx = toks[max(0, i - window): i + window + 1]
            if any(w.startswith(s) for s in stems for w in ctx):
                return True
    return False


def json_key_value(path: str, value: str, text: str) -> bool:
    """A tool output (JSON) holding ``"<leaf>": value``."""
    pat = r'"' + re.escape(leaf(path)) + r'"\s*:\s*"?' + re.escape(value) + r'(?:\.0+)?"?(?![\w.])'
    return re.search(pat, text) is not None


def _slot(spec: Any, path: str):
    return spec.slots.get(path)


# --- compile ------------------------------------------------------------------
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
        sl = _slot(spec, path)
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
    out.extend(_record_rule_criteria(turn, spec, ctx, cid))
    out.extend(_must_ask(turn, spec, ctx, cid))
    out.extend(_option_preferences(turn, spec, ctx, cid))
    out.extend(_spending_limits(turn, spec, ctx, cid))
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


def find_record(ctx: StepContext, tool: str, key: str, value: str) -> Optional[dict[str, Any]]:
    """The latest successful answer of a ``tool`` call that is a JSON object about ``key`` = ``value``: the
    answer holds it, or (an answer without the key: a profile need not repeat the user id) the call was made
    with it."""
    value = str(value).strip()
    if not value:
        return None
    for c in reversed(ctx.calls):
        if c.tool != tool or not c.ok:
            continue
        rec = c.json_answer()
        if not isinstance(rec, dict):
            continue
        about = rec.get(key) if key in rec else c.args.get(key)  # the answer's own key first
        if str(about if about is not None else "").strip() == value:
            return rec
    return None


def _items(args: dict[str, str], arg: str) -> dict[int, dict[str, str]]:
    """Flattened array argument ``arg[i].k`` (or ``arg[i]``) -> {i: {k: value}}."""
    out: dict[int, dict[str, str]] = {}
    for p, v in args.items():
        m = re.match(re.escape(arg) + r"\[(\d+)\](?:\.(.+))?$", p)
        if m:
            out.setdefault(int(m.group(1)), {})[m.group(2) or ""] = str(v)
    return out


def check_record_rule(rule: dict[str, Any], args: dict[str, str], rec: dict[str, Any],
                      now: Optional[str], user_texts: tuple[str, ...] = ()) -> tuple[Optional[bool], str]:
    """(violated? -- None when the policy's condition cannot be checked from the log, why)."""
    if "not_below" in rule:
        for arg, fld in rule["not_below"].items():
            a, r = parse_number(str(args.get(arg, ""))), parse_number(str(rec.get(fld, "")))
            if a is None or r is None:
                return None, f"{arg} or the record's {fld} is not a number"
            if a < r:
                return True, f"{arg}={a:g} is below the record's {fld}={r:g}"
        return False, "no argument below the record"
    if "same_count" in rule:
        for arg, fld in rule["same_count"].items():
            n_call, rv = len(_items(args, arg)), rec.get(fld)
            if not isinstance(rv, list):
                return None, f"the record's {fld} is not a list"
            if n_call != len(rv):
                return True, f"the call has {n_call} {arg}, the record {len(rv)}"
        return False, "same number of items as the record"
    if "allowed_if_any" in rule:
        unsure = []
        for cond in rule["allowed_if_any"]:
            if cond.get("user_says") is not None:  # a claim of the user's (e.g. "the airline cancelled it")
                said = next((w for w in cond["user_says"] for t in user_texts if _phrase_in(w, t)), None)
                held, what = said is not None, f"the user says {said!r}"
            elif cond.get("within_hours") is not None:
                val = rec.get(cond["field"])
                try:
                    held = datetime.fromisoformat(now) - datetime.fromisoformat(str(val)) <= \
                        timedelta(hours=float(cond["within_hours"]))
                    what = f"{cond['field']} {val} within {cond['within_hours']} h of {now}"
                except (TypeError, ValueError):  # unreadable: the condition may hold
                    held, what = True, f"the record's {cond['field']}={val!r} is not a date-time"
                    cond = dict(cond, unsure=True)
            else:
                val = rec.get(cond["field"])
                held = str(val) in [str(x) for x in cond["in"]]
                what = f"{cond['field']}={val!r} in {cond['in']}"
            if held and not cond.get("unsure"):
                return False, f"allowed: {what}"
            if held:
                unsure.append(what)
        if unsure:
            return None, f"{'; '.join(unsure)}: the rest of the condition is not checkable from the log"
        return True, "none of the policy's conditions holds on the record: " + "; ".join(
            f"{c['field']}={rec.get(c['field'])!r}" for c in rule["allowed_if_any"] if "field" in c)
    if "frozen" in rule:
        fz = rule["frozen"]
        if not all(str(rec.get(f)) in [str(x) for x in vals] for f, vals in fz["when"].items()):
            return False, "the record is not in the frozen state " + str(fz["when"])
        rv = rec.get(fz["arg"])
        if not isinstance(rv, list):
            return None, f"the record's {fz['arg']} is not a list"
        key = lambda d: tuple(str(d.get(k, "")) for k in fz["by"])  # noqa: E731
        old = sorted(key(x) for x in rv if isinstance(x, dict))
        new = sorted(key(x) for x in _items(args, fz["arg"]).values())
        if old == new:
            return False, f"{fz['arg']} unchanged"
        if any(f in args and str(args[f]) not in [str(x) for x in vals] for f, vals in fz["when"].items()):
            return None, (f"{fz['arg']} change and the call also leaves {fz['when']}: whether the items may change "
                          "together with it is open")
        return True, f"{fz['arg']} change while the record has {fz['when']}: {old} -> {new}"
    if "allowance" in rule:
        al = rule["allowance"]
        pi = al["per_item"]
        row = pi["table"].get(str(rec.get(pi["record_field"])))
        per = None if row is None else row.get(str(args.get(pi["arg"], "")))
        charged, total = parse_number(str(args.get(al["charged"], ""))), parse_number(str(args.get(al["total"], "")))
        n_items = len(_items(args, al["items"]))
        if per is None or charged is None or total is None or not n_items:
            return None, (f"the allowance needs {pi['record_field']} (record: {rec.get(pi['record_field'])!r}), "
                          f"{pi['arg']}, {al['charged']}, {al['total']} and {al['items']}")
        due = max(0, int(total) - n_items * int(per))
        if int(charged) != due:
            return True, (f"{al['charged']}={charged:g}, but {al['total']}={total:g} with {n_items} {al['items']} x "
                          f"{per} free ({pi['record_field']} {rec.get(pi['record_field'])}, {pi['arg']} "
                          f"{args.get(pi['arg'])}) leaves {due}")
        return False, f"{al['charged']}={due} as the allowance gives"
    if "kind_limits" in rule:
        kl = rule["kind_limits"]
        counts: dict[str, int] = {}
        for item in _items(args, kl["arg"]).values():
            pid = item.get(kl["id"], "")
            node: Any = rec
            for part in kl["kind"].replace("{id}", "\0").split("."):
                node = node.get(pid if part == "\0" else part) if isinstance(node, dict) else None
            if node is not None:
                counts[str(node)] = counts.get(str(node), 0) + 1
        over = {k: n for k, n in counts.items() if k in kl["max"] and n > int(kl["max"][k])}
        if over:
            return True, "; ".join(f"{n} {k} (at most {kl['max'][k]})" for k, n in over.items())
        return False, f"within the limits {kl['max']}: {counts}"
    if "not_started" in rule:
        ns = rule["not_started"]
        items = rec.get(ns["field"])
        if not isinstance(items, list) or not now:
            return None, f"the record's {ns['field']} is not a list"
        today = str(now)[:10]
        past = [str(x.get(ns["date"])) for x in items if isinstance(x, dict) and str(x.get(ns["date"], ""))[:10] < today
                and str(x.get(ns["date"], "")).strip()]
        if past:
            return True, f"{ns['field']} dated {past} are before {today}: part of it has already started"
        return False, f"no {ns['field']} dated before {today}"
    return None, "no check"


def _record_rule_criteria(turn: Turn, spec: Any, ctx: StepContext, cid) -> list[Criterion]:
    """UV per policy record rule of this tool: the call's values against the record a lookup returned.

    UV because the issue's UV covers values the policy does not license ("a payment method not in the
    profile"); a rule is only checked when the record for the call's key is in the history.
    """
    out = []
    args = turn.state_after
    for i, rule in enumerate(spec.policy.record_rules):
        if rule["tool"] != spec.tool:
            continue
        rec = find_record(ctx, rule["record"], rule["key"], args.get(rule["key"], ""))
        if rec is None:
            continue
        violated, why = check_record_rule(rule, args, rec, spec.policy.now, tuple(ctx.user_texts))
        check = next(c for c in ("not_below", "same_count", "allowed_if_any", "frozen", "allowance", "kind_limits",
                                 "not_started") if c in rule)
        out.append(Criterion(cid("UV", f"record_rule:{i}"), FailureClass.UV,
                             {"slot": f"record_rule:{check}", "value": "", "value_type": "text", "tool_step": True,
                              "rule": "record_rule", "check": check, "violated": violated, "why": why,
                              "cite": str(rule.get("cite", "")), "record": rule["record"]},
                             "tool", None, f"{spec.tool} breaks the policy rule '{check}' on the "
                                           f"{rule['record']} record: {why}"))
    return out


def _must_ask(turn: Turn, spec: Any, ctx: StepContext, cid) -> list[Criterion]:
    """UV for an argument the policy says the agent must ask about ("should ask if the user wants ...") when
    no earlier reply of the agent and no user message raised it: its value then comes from neither."""
    out = []
    for key, words in spec.policy.must_ask.items():
        tool, _, arg = key.partition(".")
        if tool != spec.tool or arg not in turn.state_after:
            continue
        raised = next((w for w in words for t in ctx.agent_texts + ctx.user_texts if _phrase_in(w, t)), None)
        out.append(Criterion(cid("UV", f"must_ask:{arg}"), FailureClass.UV,
                             {"slot": arg, "value": turn.state_after[arg], "value_type": "text", "tool_step": True,
                              "rule": "must_ask", "raised": raised, "words": list(words)},
                             "user", None, f"the policy says the agent must ask about {arg}; nobody raised it "
                                           "before the call"))
    return out


# a preference the user softens in the same sentence is no constraint ("direct flights, but one stop is also fine")
PREFERENCE_SOFTENED = re.compile(r"\b(fine|ok|okay|don'?t mind|do not mind|acceptable|either way|not necessarily|"
                                 r"doesn'?t matter|does not matter|whatever)\b", re.I)


def latest_stated(ctx: StepContext, read: Callable[[str], Any]) -> Optional[tuple[Any, str]]:
    """(what ``read`` finds, the sentence) of the user's latest sentence, not softened, in which ``read`` finds
    something (neither None nor False): a preference, a time window, a spending cap."""
    found = None
    for text in ctx.user_texts:
        for sent, _ in sentences(text):
            if not PREFERENCE_SOFTENED.search(sent):
                got = read(sent)
                if got is not None and got is not False:
                    found = (got, sent.strip())
    return found


def stated_preference(ctx: StepContext, words: list[str]) -> Optional[str]:
    """The user's latest sentence stating one of ``words`` as a wish: any inflection, not negated just before
    ("not necessarily the cheapest"), not softened in the same sentence."""
    found = latest_stated(ctx, lambda sent: any(request_phrase_in(w, sent, nouns_too=True) for w in words))
    return None if found is None else found[1]


def stated_time_window(ctx: StepContext) -> Optional[TimeWindow]:
    """The time window of the user's latest sentence that states one ("after 8 am and before 9 pm"), not softened
    in the same sentence."""
    found = latest_stated(ctx, stated_window)
    return None if found is None else found[0]


def option_clock(opt: list[dict[str, Any]], fields: dict[str, str], window: TimeWindow) -> Optional[float]:
    """The clock time a window binds in an option: its first part's departure, or its last part's arrival."""
    return clock_minutes(opt[-1].get(fields["arrives"])) if window.arrival else clock_minutes(
        opt[0].get(fields["departs"]))


def _fill(template: str, args: dict[str, Any]) -> Optional[str]:
    """``prices.{cabin}`` with the call's ``cabin`` argument; None when the call lacks it."""
    missing = [k for k in re.findall(r"\{(\w+)\}", template) if not str(args.get(k, "")).strip()]
    return None if missing else re.sub(r"\{(\w+)\}", lambda m: str(args[m.group(1)]), template)


def _number_at(obj: Any, path: Optional[str]) -> Optional[float]:
    if path is None:
        return None
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return parse_number(str(obj)) if not isinstance(obj, bool) else None


CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(?:\+(\d+))?\s*$")


def clock_minutes(value: Any) -> Optional[float]:
    """Minutes since the start of the first day of a clock time ``HH:MM[:SS]``, ``+N`` days later ("00:30:00+1")."""
    m = CLOCK.match(str(value or ""))
    if not m:
        return None
    return int(m.group(4) or 0) * 1440 + int(m.group(1)) * 60 + int(m.group(2)) + int(m.group(3) or 0) / 60


def searched_options(ctx: StepContext, rule: dict[str, Any]) -> dict[str, list[list[dict[str, Any]]]]:
    """Options the agent's searches returned, grouped by search (the same arguments: one group, whichever of the
    ``options_from`` tools ran): an option is a list of parts; a part without a key field takes it from the search's
    arguments (a date searched for)."""
    groups: dict[str, list[list[dict[str, Any]]]] = {}
    for c in ctx.calls:
        if c.tool not in rule["options_from"] or not c.ok:
            continue
        out = c.json_answer()
        if not isinstance(out, list):
            continue
        g = groups.setdefault(json.dumps(c.args, sort_keys=True, default=str), [])
        for opt in out:
            parts = [opt] if isinstance(opt, dict) else opt if isinstance(opt, list) else []
            if parts and all(isinstance(p, dict) for p in parts):
                g.append([{**{k: c.args[k] for k in rule["keys"] if k in c.args}, **p} for p in parts])
    return groups


def _option_preferences(turn: Turn, spec: Any, ctx: StepContext, cid) -> list[Criterion]:
    """IUV per preference the user stated ("the cheapest", "nonstop") and a call that picks searched options: the
    call ignores it when an available option of the same search has less of what the preference minimises (price
    summed over the parts, or the number of parts). Only options the agent's own searches returned are compared."""
    out = []
    args = turn.state_after
    for i, rule in enumerate(spec.policy.option_preferences):
        if spec.tool not in rule["tools"]:
            continue
        keys = rule["keys"]
        picked = {tuple(item.get(k, "") for k in keys) for item in _items(args, rule["arg"]).values()
                  if any(item.get(k, "").strip() for k in keys)}
        groups = searched_options(ctx, rule)
        if not picked or not groups:
            continue

        def key_of(part: dict[str, Any]) -> tuple[str, ...]:
            return tuple(str(part.get(k, "")) for k in keys)

        avail_path = _fill(rule["available"], args) if rule.get("available") else None

        def available(o: list[dict[str, Any]]) -> bool:
            return avail_path is None or all((_number_at(p, avail_path) or 0) > 0 for p in o)

        window = stated_time_window(ctx) if rule.get("time_window") else None

        def in_window(o: list[dict[str, Any]]) -> Optional[bool]:
            return None if window is None else window.holds(option_clock(o, rule["time_window"], window))

        if window is not None:
            out.extend(_window_criterion(i, groups, picked, key_of, window, in_window, available, cid))
        for k, pref in enumerate(rule["prefer"]):
            sent = stated_preference(ctx, pref["words"])
            if sent is None:
                continue
            least = pref["least"]
            path = None if least.startswith("@") else _fill(least, args)

            def cost(opt: list[dict[str, Any]]) -> Optional[float]:
                if least == "@parts":
                    return float(len(opt))
                if least.startswith("@span:"):  # first part's start to last part's end
                    _, start, end = least.split(":")
                    t0, t1 = clock_minutes(opt[0].get(start)), clock_minutes(opt[-1].get(end))
                    return None if t0 is None or t1 is None else t1 - t0
                vals = [_number_at(p, path) for p in opt]
                return None if any(v is None for v in vals) else float(sum(vals))

            chosen_any, better = False, []
            for opts in groups.values():
                chosen = [o for o in opts if all(key_of(p) in picked for p in o)]
                if not chosen:
                    continue
                chosen_any = True
                # a rival outside the user's stated time window is no option ("the cheapest after 8 am")
                rivals = [(c, o) for o in opts if o not in chosen for c in [cost(o)]
                          if c is not None and available(o) and in_window(o) is not False]
                best = min(rivals, key=lambda x: x[0], default=None)
                for o in chosen:
                    c = cost(o)
                    if c is not None and best is not None and best[0] < c and (o, c, best[1], best[0]) not in better:
                        better.append((o, c, best[1], best[0]))
            if not chosen_any:
                continue

            why = "; ".join(f"{_option_name(o, key_of)} ({c:g}) where {_option_name(b, key_of)} ({bc:g}) was available"
                            for o, c, b, bc in better)
            out.append(Criterion(cid("IUV", f"preference:{i}:{k}"), FailureClass.IUV,
                                 {"slot": f"preference:{pref['words'][0]}", "value": pref["words"][0],
                                  "sentence": sent, "violated": bool(better), "why": why, "least": pref["least"],
                                  "tool_step": True, "rule": "option_preference"},
                                 "user", None, f"the user asked for the {pref['words'][0]} option ({sent!r}); "
                                               f"the call picks {why}"))
    return out


def _option_name(opt: list[dict[str, Any]], key_of) -> str:
    return " + ".join(key_of(p)[0] for p in opt)


def _window_criterion(i: int, groups, picked, key_of, window: TimeWindow, in_window, available,
                      cid) -> list[Criterion]:
    """IUV for the time window the user stated: violated when a chosen option falls outside it while an available
    option of the same search falls inside; none when no option of the call's searches fits (nothing to choose)."""
    outside, fits_any = [], False
    for opts in groups.values():
        chosen = [o for o in opts if all(key_of(p) in picked for p in o)]
        if not chosen:
            continue
        inside = [o for o in opts if o not in chosen and available(o) and in_window(o)]
        fits_any = fits_any or bool(inside) or any(in_window(o) for o in chosen)
        for o in chosen:
            if in_window(o) is False and inside:
                outside.append(f"{_option_name(o, key_of)} falls outside it where {_option_name(inside[0], key_of)} "
                               "fits")
    if not fits_any:
        return []
    why = "; ".join(outside)
    return [Criterion(cid("IUV", f"preference:{i}:window"), FailureClass.IUV,
                      {"slot": "preference:time window", "value": window.describe(), "sentence": window.sentence,
                       "violated": bool(outside), "why": why, "least": "@window", "tool_step": True,
                       "rule": "option_preference"},
                      "user", None, f"the user asked for {window.describe()} ({window.sentence!r}); the call picks "
                                    f"{why or 'options inside it'}")]


def stated_spending_limit(ctx: StepContext) -> Optional[tuple[float, str]]:
    """(cap, sentence) of the user's latest sentence that states the most they will pay, not softened."""
    return latest_stated(ctx, stated_limit)


def paid_sum(record: Any, path: str) -> Optional[float]:
    """The sum of ``<list>[].<field>`` in a record; None when the list is not there or an amount is no number."""
    head, _, fld = path.partition("[].")
    obj = record
    for part in head.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    if not isinstance(obj, list):
        return None
    vals = [_number_at(item, fld) for item in obj]
    return None if any(v is None for v in vals) else float(sum(vals))


def _spending_limits(turn: Turn, spec: Any, ctx: StepContext, cid) -> list[Criterion]:
    """IUV when a write charges more than the user said they would pay ("up to $600"): the charge is the sum the
    call's own answer lists minus the same sum in the latest earlier answer about the same record (a booking's
    whole payment when there is none). Only calls whose answer says what was paid are checked."""
    step = turn.meta.get("step") or {}
    rules = [(i, r) for i, r in enumerate(spec.policy.spending_limits) if spec.tool in r["tools"]]
    if step.get("is_error") or not rules:
        return []
    after = json_or_none(str(step.get("result") or ""))
    if not isinstance(after, dict):
        return []
    out = []
    for i, rule in rules:
        paid_after = paid_sum(after, rule["paid"])
        limit = stated_spending_limit(ctx) if paid_after is not None else None
        if limit is None:
            continue
        key = str(after.get(rule["key"]) or turn.state_after.get(rule["key"]) or "").strip()
        before = None
        for c in reversed(ctx.calls):
            rec = c.json_answer() if c.ok else None
            if key and isinstance(rec, dict) and str(rec.get(rule["key"], "")).strip() == key:
                before = paid_sum(rec, rule["paid"])
                if before is not None:
                    break
        charge = paid_after - (before or 0.0)
        cap, sent = limit
        out.append(Criterion(cid("IUV", f"spending_limit:{i}"), FailureClass.IUV,
                             {"slot": "spending limit", "value": f"{cap:g}", "sentence": sent, "charge": charge,
                              "violated": charge > cap + 0.005, "tool_step": True, "rule": "spending_limit"},
                             "user", None, f"the user would pay at most {cap:g} ({sent!r}); the call charges "
                                           f"{charge:g}"))
    return out


def _phrase_in(phrase: str, text: str) -> bool:
    p = " ".join(tokens(phrase))
    return bool(p) and f" {p} " in " " + " ".join(tokens(text)) + " "


# endings of an inflected or derived form of a request verb ("cancelling", "cancellation", "modifying")
_INFLECTIONS = ("s", "es", "ing", "ling", "ation", "ations", "lation", "lations")
# (no past forms: "I booked it", "cancelled by the airline", "canceled reservations" report, they do not ask)
REQUEST_GAP = 2  # words allowed between two words of a request phrase ("change my *return* flight")
NEGATION_REACH = 3  # a negation this many words before the phrase negates it ("I don't want to cancel")


# an inflected / derived request word after one of these is a noun, which asks for nothing ("my booking", "why the
# cancellation ..."); the policy's own words match as written ("my shipping address")
NOUN_DETERMINERS = frozenset({"the", "a", "an", "my", "your", "our", "his", "her", "their", "this", "that", "its",
                              "original", "previous", "current", "last", "earlier", "existing"})
# the user takes a request back ("I'll hold off on making any changes", "never mind", "let's not proceed")
WITHDRAWAL = re.compile(r"\b(hold off|never ?mind|forget (?:it|about it)|"
                        r"(?:do not|don'?t|not|won'?t|will not) (?:want to |wish to |be able to )?"
                        r"(?:proceed|go ahead|make (?:any|the|these) changes?)|let'?s not|i'?ll pass|"
                        r"(?:keep|leave) (?:it|things|everything|my \w+) (?:as it is|as is|unchanged)|no changes)\b", re.I)


def word_form_of(token: str, word: str) -> bool:
    """``token`` is ``word`` or a present / -ing / -ation form of it (cancel: cancels, cancelling, cancellation;
    change: changes, changing; modify: modifies, modifying, modification)."""
    if token == word:
        return True
    if len(word) < 3:
        return False
    if token.startswith(word) and token[len(word):] in _INFLECTIONS:
        return True
    if word.endswith("e") and token.startswith(word[:-1]) and token[len(word) - 1:] in ("ing", "es", "ation"):
        return True
    return word.endswith("y") and token.startswith(word[:-1]) and token[len(word) - 1:] in (
        "ies", "ying", "ication", "ications")


def request_phrase_in(phrase: str, text: str, nouns_too: bool = False) -> bool:
    """A user asks for something in ``phrase``'s words: each word in order, in any inflected form, with at most
    ``REQUEST_GAP`` other words between two of them ("I'd like to change my return flight" for "change my
    flight", "would cancelling be an option" for "cancel"), not a derived form used as a noun ("my booking"), and
    no negation just before the first word (a negation elsewhere in the sentence, "I don't have the id, but I
    want to cancel", does not count). ``nouns_too``: a preference ("the cheapest") is a noun phrase."""
    want, toks = tokens(phrase), tokens(text)
    if not want:
        return False
    for start, tok in enumerate(toks):
        if not word_form_of(tok, want[0]):
            continue
        pos, ok = start, True
        for w in want[1:]:
            nxt = next((j for j in range(pos + 1, min(len(toks), pos + 2 + REQUEST_GAP)) if word_form_of(toks[j], w)),
                       None)
            if nxt is None:
                ok = False
                break
            pos = nxt
        noun = tok != want[0] and start > 0 and toks[start - 1] in NOUN_DETERMINERS  # "my booking", "the cancellation"
        if ok and (nouns_too or not noun) \
                and not any(NEGATION.fullmatch(t) for t in toks[max(0, start - NEGATION_REACH):start]):
            return True
    return False


def events(turn: Turn) -> list[tuple[str, str]]:
    """(speaker, text) in dialogue order, u_t in its place and this step's reply last."""
    hist = [(u.speaker, u.text) for u in turn.history]
    pos = (turn.meta.get("step") or {}).get("u_t_position", len(hist))
    if turn.user.strip():
        hist.insert(pos, ("user", turn.user))
    if turn.meta["step"]["kind"] == "reply":
        hist.append(("agent", turn.agent))
    return hist


def user_requests(turn: Turn, spec: Any) -> dict[str, tuple[str, bool]]:
    """tool -> (the user's latest sentence asking for it, whether an agent reply after it declines)."""
    found: dict[str, tuple[str, int]] = {}
    ev = events(turn)
    for i, (who, text) in enumerate(ev):
        if who != "user":
            continue
        for sent, _ in sentences(text):
            if WITHDRAWAL.search(sent):
                found.clear()  # every request made so far is taken back; a later one counts again
                continue
            for tool, words in spec.policy.request_words.items():
                if any(request_phrase_in(w, sent) for w in words):
                    found[tool] = (sent.strip(), i)
    out = {}
    for tool, (sent, i) in found.items():
        declined = any(who == "agent" and not CALL_RE.match(t) and REFUSAL_CUE.search(t) for who, t in ev[i + 1:])
        out[tool] = (sent, declined)
    return out


def missing_prerequisites(prereq: list[str], done: set[str]) -> list[str]:
    """The prerequisites (``a|b``: either tool) that no successful call in ``done`` satisfies."""
    return [alt for alt in prereq if not any(t in done for t in alt.split("|"))]


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
        sl = _slot(spec, p)
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


# --- S1 -------------------------------------------------------------------------
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
    sl = _slot(spec, path)
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


# --- S2 (symbolic part; hand-set margins named above) ------------------------------
def _wish_verdict(a: dict[str, Any], tau: float, broken: str, kept: str) -> Verdict:
    """A stated wish of the user (preference, time window, spending cap) the call breaks or keeps, at
    ``MARGIN_PREFERENCE``, with the tool's answer or searches as the evidence."""
    return _decide(-MARGIN_PREFERENCE if a["violated"] else MARGIN_PREFERENCE, tau, broken if a["violated"] else kept,
                   "tool")


def _decide(m: float, tau: float, why: str, evidence: str = "") -> Verdict:
    m = max(-1.0, min(1.0, float(m)))
    if m >= tau:
        return Verdict(Decision.FALSE, abs(m), Stage.S2_SYMBOLIC, evidence, why)
    if m <= -tau:
        return Verdict(Decision.TRUE, abs(m), Stage.S2_SYMBOLIC, evidence, why)
    return Verdict(Decision.ABSTAIN, abs(m), Stage.S2_SYMBOLIC, evidence, why + f" (|m|={abs(m):.2f} < tau={tau})")


def verify_tool_step_s2(c: Criterion, turn: Turn, spec: Any, tau: float) -> Verdict:
    a = c.args
    if c.type == FailureClass.PC:
        if a["explicit_yes"]:
            return _decide(-MARGIN_PC_WEAK, tau, f"explicit 'yes', but the agent had listed only "
                                                 f"{a['listed_share']:.0%} of the call's values", "user")
        # implicit agreement ("sure", "ok"): acceptable only after a full listing
        m = MARGIN_PC_WEAK if a["listed_share"] >= LISTED_SHARE else -MARGIN_PC_WEAK
        return _decide(m, tau, f"implicit confirmation after a listing of {a['listed_share']:.0%}", "user")
    if a.get("rule") == "dropped_request":
        if (a["refused"] or a["handed_off"]) and a.get("unchecked"):
            return _decide(-MARGIN_DROPPED, tau, f"the user asked for {a['value']} ({a['sentence']!r}); the agent "
                                                 f"declined or handed off without ever looking up {a['unchecked']}, "
                                                 "so it never checked whether the policy allows it", "agent")
        if a["refused"] or a["handed_off"]:
            return _decide(0.0, tau, f"{a['value']} was not carried out, but the agent declined or handed off after "
                                     "looking up what the policy's conditions need: whether that was right needs "
                                     "those conditions")
        return _decide(-MARGIN_DROPPED, tau, f"the user asked for {a['value']} ({a['sentence']!r}); no call carried it "
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
            return _decide(MARGIN_IUV_AGREES, tau, f"the call keeps the user's {a['value']!r}", "user")
        return _decide(-MARGIN_IUV, tau, f"the user said {a['sentence']!r}; the call has {a['call_value']!r}", "user")
    if a.get("rule") == "one_call_per_message":  # structural: the same answer as S1 (leave-one-out configs)
        bad, why = one_call_decision(a)
        return _decide(-1.0 if bad else 1.0, tau, why, "agent")
    if c.type == FailureClass.WNF and a.get("rule") == "prerequisite":
        return _decide(-1.0 if a["missing"] else 1.0, tau, f"prerequisites missing: {a['missing']}" if a["missing"]
                       else f"prerequisites {a['prerequisites']} ran before", "agent")
    if c.type == FailureClass.WNF:
        if a.get("open_before"):
            return _decide(-MARGIN_WNF_REPLY, tau, f"asks for {a['slot']} while {a['open_before'][0]} is not known",
                           "agent")
        return _decide(MARGIN_WNF_REPLY, tau, f"{a['slot']} is next in the policy's order", "agent")
    if a.get("rule") == "must_ask":
        return _decide(1.0 if a["raised"] else -1.0, tau, f"{a['slot']} raised before: {a['raised']!r}", "agent")
    if a.get("rule") == "record_rule":
        if a["violated"] is None:
            return _decide(0.0, tau, a["why"])
        return _decide(-1.0 if a["violated"] else 1.0, tau, a["why"], "tool")
    if c.type == FailureClass.UV:
        return _uv_s2(c, turn, spec, tau)
    return _decide(0.0, tau, "no S2 rule")


def _uv_s2(c: Criterion, turn: Turn, spec: Any, tau: float) -> Verdict:
    ctx = StepContext.of(turn, spec)
    path, value, vt = c.args["slot"], str(c.args["value"]), c.args.get("value_type", "text")
    texts = [("user", t) for t in ctx.user_texts] + [("tool", o) for _, o in ctx.tool_outputs]
    if vt in ("date", "time"):
        for who, t in texts:
            if find_in_text(value, t, vt):
                return _decide(MARGIN_TYPED_MATCH, tau, f"{value!r} is stated in a {who} text", who)
    if vt == "number":
        small = (parse_number(value) or 0) < 10
        for who, t in texts:
            if near_keyword(value, t, path):
                return _decide(MARGIN_NEAR_KEYWORD, tau, f"{value} is stated next to '{leaf(path)}' in a {who} text", who)
            if not small and occurs_number(value, t):
                return _decide(MARGIN_TYPED_MATCH, tau, f"{value} is stated in a {who} text", who)
    if vt == "categorical" and sl_text_found(value.replace("_", " "), texts):  # one_way said as "one-way"
        return _decide(MARGIN_TYPED_MATCH, tau, f"{value!r} is stated (normalised) in the dialogue", "user")
    if vt == "text" and sl_text_found(value, texts):
        return _decide(MARGIN_TYPED_MATCH, tau, f"{value!r} is stated (normalised) in the dialogue", "user")
    for reply, answer in ctx.replies_then_user:  # the agent stated it and the user agreed
        stated = occurs(value, reply) or (vt in ("date", "number") and find_in_text(value, reply, vt)) or \
            (vt == "number" and near_keyword(value, reply, path))
        if stated and (EXPLICIT_YES.search(answer) or WEAK_YES.search(answer)):
            return _decide(MARGIN_LISTED_ACCEPTED, tau, f"the agent stated {value!r} and the user agreed", "user")
    if vt == "number":
        return _decide(-MARGIN_UNSUPPORTED_NUMBER, tau, f"no user message or tool output states {leaf(path)}={value}")
    return _decide(0.0, tau, f"{value!r} is not found verbatim; paraphrase support needs an encoder")


def sl_text_found(value: str, texts: list[tuple[str, str]]) -> bool:
    return any(find_in_text(value, t, "text") for _, t in texts)


__all__ = ["compile_tool_step", "verify_tool_step_s1", "verify_tool_step_s2", "is_tool_step",
           "StepContext", "user_enum_mentions", "requested_fields", "known_fields", "listed_share"]
