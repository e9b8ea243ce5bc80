"""Policy ``record_rules``: a write call checked against the record a lookup returned (bags only added,
the same number of passengers, a cancellation the policy allows)."""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Optional

from sage_core.evaluator.text.normalize import parse_number
from sage_core.data.types import Criterion, FailureClass, Turn
from sage_core.evaluator.tools.context import StepContext, indexed_items
from sage_core.evaluator.tools.user_requests import phrase_in


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
            n_call, rv = len(indexed_items(args, arg)), rec.get(fld)
            if not isinstance(rv, list):
                return None, f"the record's {fld} is not a list"
            if n_call != len(rv):
                return True, f"the call has {n_call} {arg}, the record {len(rv)}"
        return False, "same number of items as the record"
    if "allowed_if_any" in rule:
        unsure = []
        for cond in rule["allowed_if_any"]:
            if cond.get("user_says") is not None:  # a claim of the user's (e.g. "the airline cancelled it")
                said = next((w for w in cond["user_says"] for t in user_texts if phrase_in(w, t)), None)
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
        new = sorted(key(x) for x in indexed_items(args, fz["arg"]).values())
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
        n_items = len(indexed_items(args, al["items"]))
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
        for item in indexed_items(args, kl["arg"]).values():
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


def record_rule_criteria(turn: Turn, spec: Any, ctx: StepContext, cid) -> list[Criterion]:
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
