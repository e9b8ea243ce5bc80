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
slot is filled or the reply announces a booking ("i have booked", "booking
was successful", "reference number is") in a sentence that names no other
domain ("i have booked you a table" is the restaurant's booking). Booking intents get
their required slots from the MultiWOZ booking overlay
(``booking_overlay.apply_booking_overlay``), which ``corpora.schemas.load_schema`` applies
when the schema loads, so that PC can fire.

Domain cues in the reply (``reply_domains``): agents often move to the next
domain ("what area would you like to stay in?" after a restaurant booking)
before their predicted state holds any slot of it. Domain words and
delexicalisation tokens in the reply (stay/hotel/guesthouse/[hotel_name] ->
hotel, train/station/[value_id] -> train, taxi/car/[value_car] -> taxi,
restaurant/food/cuisine/table -> restaurant, attraction/museum/college/
entrance -> attraction, hospital/department, police) name the domains it
talks about; trip words (depart, leave, arrive, travel) name {train, taxi}
without choosing. Then:

- state unchanged and the cues name exactly one domain other than the previous
  one: the turn moves to that domain (its state may be empty, so its questions
  are legal next fields);
- otherwise, when the cues name domains but not the turn's domain (the state
  changed in one domain while the reply asks about another, or the cues are
  ambiguous, e.g. only trip words after a restaurant): the turn keeps its domain
  and ``meta.workflow_confidence`` is 0.5. The compiler multiplies the
  confidence of extracted agent requests by it, which puts them below the
  extraction floor: no WNF is judged on a request whose domain is a guess
  (PC and UV are unaffected).
``meta.reply_domains`` records the cue domains.

Untracked slots: some systems' predicted states never hold certain slots at all
(SOLOIST's hold no booking slots). A required slot that no predicted state in
the file ever holds cannot show whether the agent knew it, so each turn lists
its workflow's required slots of that kind in ``meta.untracked_slots``; the
compiler leaves them out of PC's ``missing`` and PC abstains when they are all
it could be missing.

hallucinating ``attraction-pricerange``) are dropped from the state, kept in
``meta.unmapped_state`` and counted in ``stats.unmapped_slots``; categorical
values in the 2.0 spelling ('guest house') are rewritten to the schema's
('guesthouse') and counted in ``stats.renamed_values``.
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any, Optional

from sage_core.corpora.common import LoadedTurns, LoadStats, no_turns_error, read_json
from sage_core.corpora.multiwoz.loader import SlotMapper, choose_intent, clean_value
from sage_core.corpora.schemas import load_schema
from sage_core.data.errors import SageInputError
from sage_core.data.types import Turn, Utterance
from sage_core.specs.workflow import WorkflowRegistry

SKIP_NO_DOMAIN = "no domain in the predicted state"
UNCERTAIN_WORKFLOW_CONFIDENCE = 0.5

DOMAIN_CUES = {domain: re.compile(rx, re.I) for domain, rx in {
    "hotel": r"\b(?:hotels?|guest ?houses?|stay|staying|stays|nights?|rooms?|check[- ]in|star|stars|wifi|"
             r"internet|parking)\b|\[hotel_\w+\]|\[value_(?:stars|stay)\]",
    "train": r"\b(?:trains?|railway|station|tickets?)\b|\[train_\w+\]|\[value_id\]",
    "taxi": r"\b(?:taxis?|cabs?|cars?|pick you up|picked up)\b|\[taxi_\w+\]|\[value_car\]",
    "restaurant": r"\b(?:restaurants?|food|cuisine|tables?|dine|dining|eat)\b|\[restaurant_\w+\]|\[value_food\]",
    "attraction": r"\b(?:attractions?|museums?|colleges?|entrance|theatres?|theaters?|churche?s?|architecture|"
                  r"nightclubs?|cinemas?|swimming pools?|boats?)\b|\[attraction_\w+\]",
    "hospital": r"\b(?:hospitals?|department)\b|\[hospital_\w+\]",
    "police": r"\bpolice\b|\[police_\w+\]",
}.items()}
TRIP_CUE = re.compile(r"\b(?:depart|departing|departure|leave|leaving|arrive|arriving|arrival|travel|traveling|"
                      r"travelling|destination)\b|\[value_(?:leave|arrive|departure|destination)\]", re.I)
TRIP_DOMAINS = ("train", "taxi")


def reply_domains(text: str, known: set[str]) -> tuple[set[str], set[str]]:
    """(domains the reply names, domains its trip words leave open) among ``known``."""
    strong = {d for d, rx in DOMAIN_CUES.items() if d in known and rx.search(text or "")}
    weak = {d for d in TRIP_DOMAINS if d in known} if TRIP_CUE.search(text or "") else set()
    return strong, weak


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


def own_booking_text(reply: str, domain: str, registry: WorkflowRegistry) -> Optional[str]:
    """The reply's sentences that may announce a booking in ``domain``: those naming no other domain.

    "i have booked you a table ... what day would you like to travel?" in the
    train part announces the restaurant's booking, not the train's.
    """
    known = set(registry.services())
    keep = []
    for sent in re.split(r"(?<=[.!?])\s+", reply or ""):
        strong, _ = reply_domains(sent, known)
        if not strong or domain in strong:
            keep.append(sent)
    return " ".join(keep) or None


def _changed_domain(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]],
                    known: set[str]) -> Optional[str]:
    best, best_n = None, 0
    for dom in after:
        if dom not in known:
            continue
        a, b = after.get(dom, {}), before.get(dom, {})
        n = sum(1 for k in set(a) | set(b) if a.get(k) != b.get(k))
        if n > best_n:
            best, best_n = dom, n
    return best


def _pick_domain(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]],
                 previous: Optional[str], registry: WorkflowRegistry, reply: str = ""
                 ) -> tuple[Optional[str], bool]:
    """(the turn's domain, whether it is certain); see the module docstring."""
    known = set(registry.services())
    changed = _changed_domain(before, after, known)
    strong, weak = reply_domains(reply, known)
    cues = strong | weak
    if changed:
        return changed, not cues or changed in cues
    if len(strong) == 1 and previous not in strong:
        return next(iter(strong)), True
    domain = previous or next((d for d in after if d in known and after[d]), None)
    if domain is None and len(strong) == 1:
        domain = next(iter(strong))
    return domain, not cues or domain in cues


def _tracked_slots(raw: dict, registry: WorkflowRegistry, limit: Optional[int]) -> set[str]:
    """Every schema slot that some predicted state of the file holds."""
    mapper = SlotMapper(registry)  # a throwaway mapper: the real one counts unmapped names once
    out: set[str] = set()
    for n_dlg, entries in enumerate(raw.values()):
        if limit is not None and n_dlg >= limit:
            break
        for e in entries if isinstance(entries, list) else []:
            if isinstance(e, dict):
                for st in flatten_state(e.get("state") or {}, mapper)[0].values():
                    out.update(st)
    return out


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
    tracked = _tracked_slots(raw, registry, limit)
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
            domain, certain = _pick_domain(before, after, domain, registry, response)
            if domain is None:
                stats.skipped[SKIP_NO_DOMAIN] += 1
            else:
                sa = dict(after.get(domain, {}))
                sb = dict(before.get(domain, {}))
                intent = choose_intent(registry, domain, sa, reply=own_booking_text(response, domain, registry))
                strong, weak = reply_domains(response, set(registry.services()))
                meta = {"corpus": "mwoz-outputs", "system": name, "user_text_available": False,
                        "file": Path(path).name, "system_turn": i,
                        "domains": sorted(d for d in after if after[d]),
                        "reply_domains": sorted(strong | weak)}
                if not certain:
                    meta["workflow_confidence"] = UNCERTAIN_WORKFLOW_CONFIDENCE
                spec = registry.specs.get(f"{domain}:{intent}")
                untracked = [s for s in (spec.required if spec else []) if s not in tracked]
                if untracked:
                    meta["untracked_slots"] = untracked
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
    from sage_core.data.slice_io import write_slice

    if args.limit is not None and args.limit < 1:
        raise SageInputError("--limit must be a positive number of dialogues", field="limit")
    from sage_core.data.limits import check_input_file, check_output_file

    check_input_file(args.outputs, "system outputs", field="outputs")
    check_input_file(args.schema, "schema", field="schema")
    check_output_file(args.out, "slice", field="out")
    registry = load_schema(args.schema)
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
