"""MultiWOZ dialogues -> Turns, in the MultiWOZ 2.2 schema's names.

Two formats:
- 2.2 (SGD-like ``dialogues_*.json`` + ``dialog_acts.json``): reuses the SGD
  walk; the acts, which 2.2 keeps in a separate file, are put back into the
  frames first.
- 2.4 / 2.1 / 2.0 original format (``data.json``: ``{id: {goal, log}}`` with a
  per-domain ``book``/``semi`` belief state on system turns): converted to the
  same SGD-shaped frames, then walked the same way.

The old slot names (``leaveAt``, ``price``, book-field ``people``...) are
mapped onto the 2.2 names by ``SlotMapper``, which checks every candidate
against the schema, so ``train-day`` stays ``train-day`` while hotel's ``day``
becomes ``hotel-bookday``. Names with no schema counterpart are dropped from
the state and counted in ``stats.unmapped_slots``.

Heuristic parts (documented, not annotated in the data): the domain a system
turn acts in (the domain whose state changed, else the one its acts name, else
the last active one) and the intent (``book_<domain>`` once a book slot is
filled, else ``find_<domain>``).

Booking overlay (``apply_booking_overlay``): MultiWOZ 2.2's ``schema_2.2.json``
lists no ``required_slots`` for any intent, so the outcome predicate O always
holds and premature confirmation (PC) could never fire.
``sage_core.corpora.schemas.load_schema`` therefore fills (via the profile's
``sage_core.corpora.multiwoz.booking_overlay``, so every path that loads the schema — loaders,
CLI, app, report, baselines — gets it), in a registry that is MultiWOZ 2.2's
(``is_multiwoz_registry``), the required slots of the booking intents with what a booking needs (MultiWOZ's
booking fields, the ``book`` part of the 2.0-2.4 belief state):

- ``restaurant:book_restaurant``: restaurant-bookday, restaurant-bookpeople, restaurant-booktime
- ``hotel:book_hotel``: hotel-bookday, hotel-bookpeople, hotel-bookstay
- ``train:book_train``: train-bookpeople
- ``taxi:book_taxi``: taxi-departure, taxi-destination. A taxi also needs one of
  taxi-leaveat / taxi-arriveby; ``WorkflowSpec`` has no either-or requirement
  (O = all of ``outcome_slots``/``required`` filled), so that half is not
  checked: a taxi booked with neither time is not flagged.

Only intents whose schema lists no required slots are changed, so a schema
that already defines them (or a second call) keeps its own. The booking slots
move from ``optional`` (where 2.2 lists them with the default 'dontcare') to
``required``; required + optional is the same set, so the legal-next relation
(WNF) is unchanged. The overlaid specs say so in ``spec.source``.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, Optional

from sage_core.corpora.common import (
    LoadedTurns,
    LoadStats,
    expand_paths,
    no_turns_error,
    read_json,
)
from sage_core.corpora.multiwoz.booking_overlay import (
    DOMAINS,
)
from sage_core.corpora.sgd.loader import dialogue_turns, load_dialogue_files
from sage_core.data.errors import SageInputError
from sage_core.specs.workflow import WorkflowRegistry

# old (2.0/2.1/2.4 state and dialogue-act) slot names -> 2.2 slot suffixes, tried in order
SLOT_ALIASES: dict[str, tuple[str, ...]] = {
    "leave": ("leaveat",), "leaveat": ("leaveat",), "arrive": ("arriveby",), "arriveby": ("arriveby",),
    "price": ("pricerange", "price"), "pricerange": ("pricerange",),
    "people": ("bookpeople",), "day": ("day", "bookday"), "stay": ("bookstay",),
    "time": ("booktime",), "addr": ("address",), "post": ("postcode",), "depart": ("departure",),
    "dest": ("destination",), "id": ("trainid",), "ticket": ("price",), "fee": ("entrancefee",),
    "open": ("openhours",), "car": ("type",), "ref": ("ref",), "reference": ("ref",),
}

# MultiWOZ dialogue acts -> the SGD-style act names SAGE's compiler reads
ACT_MAP = {
    "inform": "INFORM", "request": "REQUEST", "recommend": "OFFER", "select": "OFFER",
    "nooffer": "NOTIFY_FAILURE", "nobook": "NOTIFY_FAILURE", "book": "NOTIFY_SUCCESS",
    "offerbooked": "NOTIFY_SUCCESS", "offerbook": "OFFER_INTENT", "reqmore": "REQ_MORE",
    "bye": "GOODBYE", "welcome": "WELCOME", "greet": "GREET", "thank": "THANK_YOU",
}
NO_VALUE = {"", "none", "not mentioned", "?", "not given"}
# MultiWOZ 2.0/2.1 spellings of 2.2 categorical values that differ by more than spacing
VALUE_VARIANTS = {"mutliple sports": "multiple sports"}
DONTCARE = {"dontcare", "dont care", "don't care", "do n't care", "doesn't care"}


def load_multiwoz_schema(path: Any) -> WorkflowRegistry:
    """``schema_2.2.json`` with the MultiWOZ profile attached (``corpora.schemas.load_schema`` applies its booking overlay)."""
    from sage_core.corpora.schemas import load_schema

    return load_schema(path)


BOOKED_RE = re.compile(
    r"\b(?:i(?: have|'ve| had)|we(?: have|'ve)) (?:successfully |now |gone ahead and |went ahead and )?"
    r"(?:booked|reserved|made (?:a|the|your|those|that) (?:reservation|booking)s?)\b|"
    r"\bbooking (?:was|is|has been) (?:successful|complete|completed|confirmed|made)\b|"
    r"\b(?:has|have) been (?:successfully )?(?:booked|reserved)\b|\breference (?:number|code|no\.?)\s*(?:is|:)", re.I)


def announces_booking(text: str) -> bool:
    """Whether an agent reply says a booking was made ("i have booked ...", "reference number is ...")."""
    return bool(BOOKED_RE.search(text or ""))


def clean_value(v: Any) -> Optional[str]:
    """A belief-state value, or None when it means 'unset'."""
    if v is None:
        return None
    if isinstance(v, list):
        v = v[0] if v else ""
    s = str(v).strip()
    if s.lower() in NO_VALUE:
        return None
    if s.lower() in DONTCARE:
        return "dontcare"
    return s


class SlotMapper:
    """Old MultiWOZ slot names -> 2.2 schema slot names, checked against the registry."""

    def __init__(self, registry: WorkflowRegistry):
        self.slots: dict[str, set[str]] = {}
        self.values: dict[str, dict[str, str]] = {}  # categorical slot -> {squashed value: schema value}
        for spec in registry:
            self.slots.setdefault(spec.service, set()).update(spec.slots)
            for name, ss in spec.slots.items():
                if ss.is_categorical and ss.possible_values:
                    self.values[name] = {_squash(v): v for v in ss.possible_values}
        self.unmapped: Counter = Counter()
        self.renamed_values: Counter = Counter()

    def value(self, slot: str, value: str) -> str:
        """A categorical value in the schema's spelling ('guest house' -> 'guesthouse'); others unchanged.

        Only spelling/spacing differences are fixed; a value that is simply not
        a possible value (an agent's error) is kept so the evaluator sees it.
        """
        table = self.values.get(slot)
        if not table or value in table.values() or value == "dontcare":
            return value
        v = VALUE_VARIANTS.get(value.lower(), value)
        fixed = table.get(_squash(v))
        if fixed is None:
            return value
        self.renamed_values[f"{slot}: {value} -> {fixed}"] += 1
        return fixed

    def map(self, domain: str, raw: str, in_book: Optional[bool] = None, count: bool = True) -> Optional[str]:
        """``in_book``: True for a ``book`` field (prefix 'book'), False for ``semi``, None unknown."""
        dom = domain.lower()
        name = str(raw).lower().replace(" ", "")
        known = self.slots.get(dom, set())
        if name.startswith(dom + "-"):
            name = name[len(dom) + 1:]
        cands: list[str] = []
        if in_book and name not in ("department", "name"):
            cands.append("book" + name)
        cands.append(name)
        for alias in SLOT_ALIASES.get(name, ()):
            if in_book is False and alias.startswith("book"):
                continue
            cands.append(alias)
        if not in_book:
            cands.append("book" + name)
        for c in cands:
            full = f"{dom}-{c}"
            if full in known:
                return full
        if count:
            self.unmapped[f"{dom}-{name}"] += 1
        return None


def _squash(v: str) -> str:
    return re.sub(r"[^a-z0-9]", "", str(v).lower())


def choose_intent(registry: WorkflowRegistry, domain: str, state: dict[str, str],
                  reply: Optional[str] = None) -> Optional[str]:
    """``book_<d>`` once a book slot of the domain is filled (and the schema has it), else ``find_<d>``.

    ``reply``: the agent's text; a reply that announces a booking acts in
    ``book_<d>`` even when no book slot is filled (the case PC is about).
    """
    intents = [s.intent for s in registry if s.service == domain]
    if not intents:
        return None
    booking = any(k.startswith(f"{domain}-book") and v for k, v in state.items()) or (
        reply is not None and announces_booking(reply))
    if booking and f"book_{domain}" in intents:
        return f"book_{domain}"
    if f"find_{domain}" in intents:
        return f"find_{domain}"
    return intents[0]


def _acts_to_actions(dialog_act: dict, mapper: SlotMapper) -> dict[str, list[dict]]:
    """``{"Hotel-Inform": [[slot, value], ...]}`` -> {domain: [SGD-style action]}.

    Domain-less acts (``general-*``, ``Booking-*``) are filed under "" and
    attached to whichever service the turn is assigned to.
    """
    out: dict[str, list[dict]] = {}
    if not isinstance(dialog_act, dict):  # 2.1 marks some turns "No Annotation"
        return out
    for name, pairs in dialog_act.items():
        if "-" not in name or not isinstance(pairs, list):
            continue
        dom, act = name.split("-", 1)
        dom = dom.lower()
        target = dom if dom in DOMAINS else ""
        act_u = ACT_MAP.get(act.lower(), act.upper())
        for pair in pairs or [["none", "none"]]:
            if not isinstance(pair, (list, tuple)):
                continue
            slot_raw = str(pair[0]) if pair else "none"
            val = clean_value(pair[1]) if len(pair) > 1 else None
            slot = None
            if slot_raw.lower() not in ("none", "choice", ""):
                if target:
                    slot = mapper.map(target, slot_raw, count=False)
                else:
                    slot = "?" + slot_raw.lower()  # resolved against the turn's service later
            out.setdefault(target, []).append({"act": act_u, "slot": slot or "",
                                               "values": [val] if val and act_u != "REQUEST" else []})
    return out


def _resolve_generic(actions: list[dict], svc: str, mapper: SlotMapper) -> list[dict]:
    res = []
    for a in actions:
        a = dict(a)
        if a["slot"].startswith("?"):
            a["slot"] = mapper.map(svc, a["slot"][1:], count=False) or ""
        res.append(a)
    return res


# --- MultiWOZ 2.2 ------------------------------------------------------------
def _find_dialog_acts(files: list[Path]) -> Optional[Path]:
    for d in {f.parent for f in files} | {f.parent.parent for f in files}:
        p = d / "dialog_acts.json"
        if p.is_file():
            return p
    return None


def load_multiwoz22(paths: Any, registry: WorkflowRegistry, dialog_acts: Any = None) -> LoadedTurns:
    """MultiWOZ 2.2 ``dialogues_*.json`` (+ ``dialog_acts.json``, looked up beside or above them).

    Without a dialog-acts file (or for the turns it does not cover) frames have
    no actions: agent acts are then left to the compiler's extraction
    (``agent_acts = None``) and user values come from the slot spans only.
    """
    files = expand_paths(paths, "dialogues_*.json", "multiwoz22 dialogue")
    acts_path = Path(dialog_acts) if dialog_acts else _find_dialog_acts(files)
    acts_all = read_json(acts_path) if acts_path else {}
    if not isinstance(acts_all, dict):
        raise SageInputError("dialog_acts.json must map dialogue ids to turns", file=str(acts_path))
    mapper = SlotMapper(registry)

    def prepare(d: dict, file: str) -> dict:
        did = str(d.get("dialogue_id", ""))
        dacts = acts_all.get(did) or acts_all.get(did.replace(".json", "")) or {}
        turns = []
        for i, t in enumerate(d.get("turns", []) or []):
            t = dict(t)
            frames = [dict(fr) for fr in t.get("frames", []) or []]
            for fr in frames:
                if not fr.get("actions"):
                    fr.pop("actions", None)  # 2.2 keeps acts elsewhere: unknown, not "none"
            tid = str(t.get("turn_id", i))
            ta = dacts.get(tid) if isinstance(dacts, dict) else None
            if ta:
                by_dom = _acts_to_actions(ta.get("dialog_act", {}), mapper)
                spans = ta.get("span_info", []) or []
                by_svc = {fr.get("service"): fr for fr in frames}
                for dom, acts in by_dom.items():
                    if not dom:
                        continue
                    fr = by_svc.get(dom)
                    if fr is None:
                        fr = {"service": dom, "slots": []}
                        frames.append(fr)
                        by_svc[dom] = fr
                    fr["actions"] = list(fr.get("actions", [])) + acts
                for fr in frames:  # frames of a turn with acts: known to have these acts (maybe none)
                    fr.setdefault("actions", [])
                t["_generic_actions"] = by_dom.get("", [])
                # span_info gives character spans for act values: fill missing slot spans
                for sp in spans:
                    if (not isinstance(sp, list) or len(sp) < 5 or "-" not in str(sp[0])
                            or not all(isinstance(x, int) for x in sp[3:5])):
                        continue
                    dom = str(sp[0]).split("-", 1)[0].lower()
                    fr = by_svc.get(dom)
                    full = mapper.map(dom, sp[1], count=False) if dom in DOMAINS else None
                    if fr is None or full is None:
                        continue
                    if not any(s.get("slot") == full and "start" in s for s in fr.get("slots", [])):
                        fr["slots"] = list(fr.get("slots", [])) + [
                            {"slot": full, "start": int(sp[3]), "exclusive_end": int(sp[4]), "value": sp[2]}]
            t["frames"] = frames
            turns.append(t)
        return dict(d, dialogue_id=did.replace(".json", ""), turns=turns)

    out = load_dialogue_files(files, registry, corpus="multiwoz22", pattern="dialogues_*.json",
                              prepare=prepare, generic_actions=lambda acts, svc: _resolve_generic(acts, svc, mapper))
    out.stats.unmapped_slots.update(mapper.unmapped)
    return out


# --- MultiWOZ 2.4 (original data.json format) ---------------------------------
def _flatten_metadata(meta: dict, mapper: SlotMapper) -> dict[str, dict[str, str]]:
    """``{domain: {book: {...}, semi: {...}}}`` -> {domain: {2.2 slot: value}}."""
    out: dict[str, dict[str, str]] = {}
    for dom, parts in (meta or {}).items():
        dom = dom.lower()
        if not isinstance(parts, dict):
            continue
        st: dict[str, str] = {}
        for field, in_book in (("semi", False), ("book", True)):
            for raw, v in (parts.get(field) or {}).items():
                if raw == "booked":  # the list of completed bookings, not a slot
                    continue
                val = clean_value(v)
                if val is None:
                    continue
                full = mapper.map(dom, raw, in_book=in_book)
                if full is not None:
                    st[full] = mapper.value(full, val)
        out[dom] = st
    return out


def _token_span(text: str, start_tok: int, end_tok: int) -> Optional[tuple[int, int]]:
    toks = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    if 0 <= start_tok <= end_tok < len(toks):
        return toks[start_tok][0], toks[end_tok][1]
    return None


def _value_span(text: str, value: str, hint: Optional[tuple[int, int]]) -> Optional[tuple[int, int]]:
    """Character span of ``value`` in ``text``: the token span if it reads as the value, else a search."""
    if hint and text[hint[0]:hint[1]].lower().strip(" .,!?") == value.lower():
        return hint[0], hint[0] + len(value)
    if value:
        i = text.lower().find(value.lower())
        if i >= 0:
            return i, i + len(value)
    return hint


def _convert24(did: str, d: dict, file: str, registry: WorkflowRegistry, mapper: SlotMapper) -> dict:
    """One original-format dialogue -> SGD-shaped frames (one user frame per domain with state)."""
    log = d.get("log")
    if not isinstance(log, list):
        raise SageInputError(f"dialogue {did}: 'log' must be a list", file=file, field="log")
    turns: list[dict] = []
    prev_states: dict[str, dict[str, str]] = {}
    active: Optional[str] = None
    services: list[str] = []
    for i in range(0, len(log), 2):
        user = log[i] if isinstance(log[i], dict) else {}
        system = log[i + 1] if i + 1 < len(log) and isinstance(log[i + 1], dict) else None
        utext = str(user.get("text", ""))
        states = _flatten_metadata((system or {}).get("metadata") or user.get("metadata") or {}, mapper)
        uacts = _acts_to_actions(user.get("dialog_act", {}), mapper)
        sacts = _acts_to_actions((system or {}).get("dialog_act", {}), mapper)
        changed = [dom for dom in DOMAINS if states.get(dom, {}) != prev_states.get(dom, {})]
        sys_doms = [dom for dom in sacts if dom]
        user_doms = [dom for dom in uacts if dom]
        acted = set(sys_doms) | set(user_doms)
        changed.sort(key=lambda dom: dom not in acted)  # a changed domain the turn's acts name first
        for cand in (changed, sys_doms, user_doms, [active] if active else []):
            cand = [c for c in cand if any(s.service == c for s in registry)]
            if cand:
                active = cand[0]
                break
        ut_frames = []
        for dom in DOMAINS:
            st = states.get(dom, {})
            if not st and dom != active:
                continue
            intent = choose_intent(registry, dom, st) if (st or dom == active) else None
            fr = {"service": dom, "slots": [],
                  "state": {"active_intent": intent or "NONE", "slot_values": st}}
            acts = [a for a in uacts.get(dom, []) if a["act"] == "INFORM" and a["slot"]]
            fr["actions"] = acts
            for sp in user.get("span_info", []) or []:
                if len(sp) >= 5 and str(sp[0]).split("-", 1)[0].lower() == dom:
                    full = mapper.map(dom, sp[1], count=False)
                    hint = (_token_span(utext, sp[3], sp[4])
                            if all(isinstance(x, int) for x in sp[3:5]) else None)
                    span = _value_span(utext, str(sp[2]), hint)
                    if full and span:
                        fr["slots"].append({"slot": full, "start": span[0], "exclusive_end": span[1]})
            for a in acts:  # Inform values without span_info: locate them by search (heuristic)
                if a["values"] and not any(s["slot"] == a["slot"] for s in fr["slots"]):
                    span = _value_span(utext, a["values"][0], None)
                    if span:
                        fr["slots"].append({"slot": a["slot"], "start": span[0], "exclusive_end": span[1]})
            ut_frames.append(fr)
            if st and dom not in services:
                services.append(dom)
        turns.append({"speaker": "USER", "utterance": utext, "frames": ut_frames})
        if system is not None:
            sframes = []
            if active:
                sframe = {"service": active, "slots": []}
                if isinstance(system.get("dialog_act"), dict):  # else unannotated: acts unknown
                    sframe["actions"] = sacts.get(active, [])
                sframes.append(sframe)
            turns.append({"speaker": "SYSTEM", "utterance": str(system.get("text", "")), "frames": sframes,
                          "_generic_actions": sacts.get("", [])})
        prev_states = states
    return {"dialogue_id": did, "services": services, "turns": turns}


def load_multiwoz24(path: Any, registry: WorkflowRegistry) -> LoadedTurns:
    """MultiWOZ 2.4 (or 2.1/2.0) ``data.json`` mapped onto the 2.2 schema's slots and intents."""
    files = expand_paths(path, "data.json", "multiwoz24")
    mapper = SlotMapper(registry)
    stats = LoadStats(corpus="multiwoz24")
    turns = []
    for f in files:
        raw = read_json(f)
        if not isinstance(raw, dict):
            raise SageInputError("expected a JSON object {dialogue_id: {goal, log}}", file=str(f))
        stats.files += 1
        for did, d in raw.items():
            if not isinstance(d, dict):
                raise SageInputError(f"dialogue {did} must be an object with a 'log'", file=str(f))
            did = str(did).replace(".json", "")
            conv = _convert24(did, d, str(f), registry, mapper)
            stats.dialogues += 1
            turns.extend(dialogue_turns(conv, file=str(f), registry=registry, stats=stats, corpus="multiwoz24",
                                        generic_actions=lambda acts, svc: _resolve_generic(acts, svc, mapper)))
    if not turns:
        raise no_turns_error(str(files[0]), "multiwoz24")
    stats.turns = len(turns)
    stats.unmapped_slots.update(mapper.unmapped)
    stats.renamed_values.update(mapper.renamed_values)
    stats.log()
    return LoadedTurns(turns, stats)
