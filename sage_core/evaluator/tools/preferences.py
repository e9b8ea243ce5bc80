"""The user's stated wishes against what the agent's searches returned: a preference ("the cheapest"),
a time window ("after 8 am"), a spending limit ("up to $600")."""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Optional

from sage_core.evaluator.text.sentences import sentences
from sage_core.evaluator.text.spending_limits import stated_limit
from sage_core.evaluator.text.time_windows import TimeWindow, stated_window
from sage_core.evaluator.text.normalize import parse_number
from sage_core.data.types import Criterion, FailureClass, Turn
from sage_core.evaluator.tools.context import StepContext, indexed_items, json_or_none
from sage_core.evaluator.tools.user_requests import request_phrase_in


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


def option_preference_criteria(turn: Turn, spec: Any, ctx: StepContext, cid) -> list[Criterion]:
    """IUV per preference the user stated ("the cheapest", "nonstop") and a call that picks searched options: the
    call ignores it when an available option of the same search has less of what the preference minimises (price
    summed over the parts, or the number of parts). Only options the agent's own searches returned are compared."""
    out = []
    args = turn.state_after
    for i, rule in enumerate(spec.policy.option_preferences):
        if spec.tool not in rule["tools"]:
            continue
        keys = rule["keys"]
        picked = {tuple(item.get(k, "") for k in keys) for item in indexed_items(args, rule["arg"]).values()
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


def spending_limit_criteria(turn: Turn, spec: Any, ctx: StepContext, cid) -> list[Criterion]:
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
