"""Real MultiWOZ agent outputs (PPTOD, UBAR, SOLOIST...) -> Turns, and the
``load-outputs`` CLI command that writes them as a slice.

Input: ``{dialogue_id: [{"response": str, "state": {domain: {slot: value}}}, ...]}``,
one entry per system turn: the agent's (delexicalised) reply and its own
predicted belief state. These are natural agent behaviours, not injected ones,
but the user utterances are NOT in these files: ``user`` is "", the history
holds the previous agent replies only, and ``meta.user_text_available`` is
False, so any criterion that needs u_t can only be judged from the states.

Heuristics: the turn's workflow is the domain whose predicted state changed
(most changed slots; ties in state order), else the previous turn's domain,
else the first domain in the state; the intent is ``book_<d>`` once a book
slot is filled. Predicted slots with no 2.2 schema counterpart (a model
hallucinating ``attraction-pricerange``) are dropped from the state, kept in
``meta.unmapped_state`` and counted in ``stats.unmapped_slots``; categorical
values in the 2.0 spelling ('guest house') are rewritten to the schema's
('guesthouse') and counted in ``stats.renamed_values``.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Optional

from ..errors import SageInputError
from ..types import Turn, Utterance
from ..workflow import WorkflowRegistry, load_sgd_schema
from .common import LoadedTurns, LoadStats, no_turns_error, read_json
from .multiwoz import SlotMapper, choose_intent, clean_value

SKIP_NO_DOMAIN = "no domain in the predicted state"


def flatten_state(state: Any, mapper: SlotMapper) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """{domain: {old slot: v}} -> ({domain: {2.2 slot: v}}, {unmapped 'domain-slot': v})."""
    out: dict[str, dict[str, str]] = {}
    unmapped: dict[str, str] = {}
    if not isinstance(state, dict):
        return out, unmapped
    for dom, slots in state.items():
        dom = str(dom).lower()
        if not isinstance(slots, dict):
            continue
        st = out.setdefault(dom, {})
        for raw, v in slots.items():
            val = clean_value(v)
            if val is None:
                continue
            full = mapper.map(dom, raw)
            if full is None:
                unmapped[f"{dom}-{str(raw).lower()}"] = val
            else:
                st[full] = mapper.value(full, val)
    return out, unmapped


def _pick_domain(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]],
                 previous: Optional[str], registry: WorkflowRegistry) -> Optional[str]:
    known = set(registry.services())
    best, best_n = None, 0
    for dom in after:
        if dom not in known:
            continue
        a, b = after.get(dom, {}), before.get(dom, {})
        n = sum(1 for k in set(a) | set(b) if a.get(k) != b.get(k))
        if n > best_n:
            best, best_n = dom, n
    if best:
        return best
    if previous:
        return previous
    return next((d for d in after if d in known and after[d]), None)


def load_system_outputs(path: str | Path, registry: WorkflowRegistry, system: Optional[str] = None,
                        limit: Optional[int] = None) -> LoadedTurns:
    """One Turn per system turn of each dialogue (``limit``: first N dialogues)."""
    path = str(path)
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise SageInputError("expected a JSON object {dialogue_id: [{response, state}, ...]}", file=path)
    name = system or Path(path).stem
    mapper = SlotMapper(registry)
    stats = LoadStats(corpus=f"mwoz-outputs:{name}")
    stats.files = 1
    turns: list[Turn] = []
    for n_dlg, (did, entries) in enumerate(raw.items()):
        if limit is not None and n_dlg >= limit:
            break
        if not isinstance(entries, list):
            raise SageInputError(f"dialogue {did}: expected a list of system turns", file=path, field=str(did))
        stats.dialogues += 1
        before: dict[str, dict[str, str]] = {}
        domain: Optional[str] = None
        history: list[Utterance] = []
        for i, e in enumerate(entries):
            if not isinstance(e, dict) or "response" not in e:
                raise SageInputError(f"dialogue {did}, system turn {i}: needs 'response' and 'state'",
                                     file=path, field="response")
            response = str(e.get("response") or "")
            after, unmapped = flatten_state(e.get("state") or {}, mapper)
            domain = _pick_domain(before, after, domain, registry)
            if domain is None:
                stats.skipped[SKIP_NO_DOMAIN] += 1
            else:
                sa = dict(after.get(domain, {}))
                sb = dict(before.get(domain, {}))
                intent = choose_intent(registry, domain, sa)
                meta = {"corpus": "mwoz-outputs", "system": name, "user_text_available": False,
                        "file": Path(path).name, "system_turn": i,
                        "domains": sorted(d for d in after if after[d])}
                if unmapped:
                    meta["unmapped_state"] = unmapped
                turns.append(Turn(turn_id=f"{did}:{i}", dialogue_id=str(did), workflow=f"{domain}:{intent}",
                                  history=[Utterance(u.speaker, u.text) for u in history], user="", agent=response,
                                  state_before=sb, state_after=sa, user_values=None, agent_acts=None,
                                  gold=None, meta=meta))
            history.append(Utterance("agent", response))
            before = after
    if not turns:
        raise no_turns_error(path, "system outputs")
    stats.turns = len(turns)
    stats.unmapped_slots.update(mapper.unmapped)
    stats.renamed_values.update(mapper.renamed_values)
    stats.log()
    return LoadedTurns(turns, stats)


# --- CLI: python -m sage_core load-outputs ------------------------------------
def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--outputs", required=True, help="system outputs JSON {dialogue_id: [{response, state}]}")
    p.add_argument("--schema", required=True, help="MultiWOZ 2.2 schema.json")
    p.add_argument("--out", required=True, help="slice JSONL to write")
    p.add_argument("--system", default=None, help="system name for meta (default: file stem)")
    p.add_argument("--limit", type=int, default=None, help="only the first N dialogues")


def run(args: argparse.Namespace) -> int:
    from ..slice_io import write_slice

    if args.limit is not None and args.limit < 1:
        raise SageInputError("--limit must be a positive number of dialogues", field="limit")
    registry = load_sgd_schema(args.schema)
    turns = load_system_outputs(args.outputs, registry, system=args.system, limit=args.limit)
    write_slice(turns, args.out)
    s = turns.stats
    msg = f"wrote {s.turns} turns from {s.dialogues} dialogues ({turns[0].meta['system']}) to {args.out}"
    if s.skipped:
        msg += "; skipped " + ", ".join(f"{n} ({why})" for why, n in s.skipped.items())
    if s.unmapped_slots:
        msg += "; unmapped predicted slots (dropped): " + ", ".join(
            f"{k} x{n}" for k, n in s.unmapped_slots.most_common())
    if s.renamed_values:
        msg += f"; {sum(s.renamed_values.values())} categorical values respelled to the schema's form"
    print(msg)
    return 0
