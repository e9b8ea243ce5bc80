"""Raw SGD dialogues -> one ``Turn`` per SYSTEM turn, plus the SGD-X slot remapping.

SGD annotates, per user turn, the dialogue state of each service (lists of
alternative surface values per slot), the user's dialogue acts with slot
spans, and per system turn the system's acts. That is everything SAGE needs,
so the turns are clean (``gold = None``); the science engineer injects failures.

The SGD-shaped dialogue walk (``dialogue_turns``) is shared with MultiWOZ 2.2,
whose files use the same frame format.
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from sage_core.corpora.common import (
    LoadedTurns,
    LoadStats,
    collapse_values,
    expand_paths,
    no_turns_error,
    read_json,
)
from sage_core.data.errors import SageInputError
from sage_core.data.types import AgentAct, Turn, UserValue, Utterance
from sage_core.specs.workflow import WorkflowRegistry, WorkflowSpec

NONE_INTENT = "NONE"
SKIP_NONE = "active intent NONE"
SKIP_NO_USER = "system turn without a preceding user turn"
SKIP_NO_SERVICE = "no frame names the service"


def _err(msg: str, file: str, did: str, idx: int, fld: str) -> SageInputError:
    return SageInputError(f"dialogue {did}, turn {idx}: {msg}", file=file, field=fld)


def _type_err(file: str, did: str, where: str, want: str, got) -> SageInputError:
    kind = {dict: "an object", list: "a list", bool: "a boolean", type(None): "null"}.get(type(got), type(got).__name__)
    return SageInputError(f"dialogue {did}: must be {want}, got {kind}", file=file, field=where)


def check_dialogue_shape(d: Any, file: str, index: int) -> None:
    """Types of every field the walk reads (SGD / MultiWOZ 2.2 format), so bad input names its field.

    Why: the walk trusts the format; a frame given as a string or a state as a
    number used to end in AttributeError deep inside it.
    """
    did = str(d.get("dialogue_id", f"#{index}")) if isinstance(d, dict) else f"#{index}"
    if not isinstance(d, dict):
        raise _type_err(file, did, f"dialogues[{index}]", "a dialogue object", d)
    turns = d.get("turns")
    if not isinstance(turns, list):
        raise _type_err(file, did, "turns", "a list of turns", turns)
    if not isinstance(d.get("services", []) or [], list):
        raise _type_err(file, did, "services", "a list of service names", d.get("services"))
    for i, t in enumerate(turns):
        w = f"turns[{i}]"
        if not isinstance(t, dict):
            raise _type_err(file, did, w, "a turn object", t)
        if not isinstance(t.get("speaker"), str):
            raise _type_err(file, did, f"{w}.speaker", "'USER' or 'SYSTEM'", t.get("speaker"))
        if not isinstance(t.get("utterance", ""), str):
            raise _type_err(file, did, f"{w}.utterance", "a string", t.get("utterance"))
        frames = t.get("frames", []) or []
        if not isinstance(frames, list):
            raise _type_err(file, did, f"{w}.frames", "a list of frames", frames)
        for j, fr in enumerate(frames):
            f = f"{w}.frames[{j}]"
            if not isinstance(fr, dict):
                raise _type_err(file, did, f, "a frame object", fr)
            if not isinstance(fr.get("service"), str):
                raise _type_err(file, did, f"{f}.service", "a service name", fr.get("service"))
            st = fr.get("state")
            if st is not None:
                if not isinstance(st, dict):
                    raise _type_err(file, did, f"{f}.state", "an object", st)
                if not isinstance(st.get("active_intent", ""), str):
                    raise _type_err(file, did, f"{f}.state.active_intent", "a string", st.get("active_intent"))
                sv = st.get("slot_values") or {}
                if not isinstance(sv, dict):
                    raise _type_err(file, did, f"{f}.state.slot_values", "an object", sv)
                for k, v in sv.items():
                    vals = v if isinstance(v, list) else [v]
                    if not all(isinstance(x, str) for x in vals):
                        raise _type_err(file, did, f"{f}.state.slot_values.{k}", "a list of strings", v)
            for key, fields in (("actions", ("act", "slot")), ("slots", ("slot",))):
                items = fr.get(key, []) or []
                if not isinstance(items, list):
                    raise _type_err(file, did, f"{f}.{key}", "a list", items)
                for k, a in enumerate(items):
                    if not isinstance(a, dict):
                        raise _type_err(file, did, f"{f}.{key}[{k}]", "an object", a)
                    for fld in fields:
                        if not isinstance(a.get(fld, ""), str):
                            raise _type_err(file, did, f"{f}.{key}[{k}].{fld}", "a string", a.get(fld))
                    for fld in ("values", "canonical_values"):
                        if not isinstance(a.get(fld, []) or [], list):
                            raise _type_err(file, did, f"{f}.{key}[{k}].{fld}", "a list", a.get(fld))
                    for fld in ("start", "exclusive_end"):
                        x = a.get(fld, 0)
                        if isinstance(x, bool) or not isinstance(x, int):
                            raise _type_err(file, did, f"{f}.{key}[{k}].{fld}", "an integer offset", x)


def _user_values(frame: dict, text: str, spec: WorkflowSpec) -> list[UserValue]:
    """INFORM acts of the user frame, located by the annotated slot spans.

    Non-categorical values are taken from the span ([start, exclusive_end) into
    u_t); categorical values (no span in SGD) from ``canonical_values``. A frame
    without ``actions`` (MultiWOZ 2.2 user frames) contributes its spans only.
    """
    spans: dict[str, list[tuple[int, int]]] = {}
    for s in frame.get("slots", []) or []:
        if "start" in s and "exclusive_end" in s and s.get("slot"):
            st, en = int(s["start"]), int(s["exclusive_end"])
            if 0 <= st <= en <= len(text):
                spans.setdefault(s["slot"], []).append((st, en))
    out: list[UserValue] = []
    seen: set[tuple[str, str]] = set()
    actions = frame.get("actions")
    if actions is None:  # spans only
        for slot, sps in spans.items():
            for st, en in sps:
                v = text[st:en]
                if (slot, v.lower()) not in seen:
                    seen.add((slot, v.lower()))
                    out.append(UserValue(slot, v, (st, en)))
        return out
    for a in actions:
        if str(a.get("act", "")).upper() != "INFORM" or not a.get("slot"):
            continue
        slot = a["slot"]
        vals = [str(v) for v in a.get("values", []) or []]
        canon = [str(v) for v in a.get("canonical_values", []) or []]
        slot_spec = spec.slots.get(slot)
        span = None
        value = None
        sps = spans.get(slot, [])
        if sps:
            # the span whose text is one of the act's values, else the first
            chosen = next((sp for sp in sps if text[sp[0]:sp[1]] in vals), sps[0])
            span, value = chosen, text[chosen[0]:chosen[1]]
        elif slot_spec is not None and slot_spec.is_categorical and canon:
            value = canon[0]
        elif vals:
            value = vals[0]
        elif canon:
            value = canon[0]
        if value is None or (slot, value.lower()) in seen:
            continue
        seen.add((slot, value.lower()))
        out.append(UserValue(slot, value, span))
    return out


def _agent_acts(frame: Optional[dict]) -> Optional[list[AgentAct]]:
    """The system frame's acts; None when the frame carries no act annotation at all."""
    if frame is None or "actions" not in frame:
        return None
    out = []
    for a in frame.get("actions") or []:
        vals = a.get("values") or []
        out.append(AgentAct(str(a.get("act", "")).upper(), a.get("slot") or None,
                            str(vals[0]) if vals else None))
    return out


def _is_active(fr: Optional[dict]) -> bool:
    return fr is not None and (fr.get("state") or {}).get("active_intent", NONE_INTENT) not in (NONE_INTENT, "", None)


def _system_service(sys_turn: dict, user_frames: dict[str, dict],
                    changed: set[str]) -> Optional[str]:
    """The service the system turn acts in.

    SGD: the system turn's single frame. With several frames (MultiWOZ 2.2,
    where every service has one) the first match of: a system frame with acts
    whose user frame is active; an active service whose state changed in u_t
    (system frames first); an active system frame; any active user frame;
    finally the first system frame (then skipped as intent NONE).
    """
    frames = [fr for fr in sys_turn.get("frames", []) or [] if fr.get("service")]
    sys_svcs = [fr["service"] for fr in frames]
    active_users = [s for s, fr in user_frames.items() if _is_active(fr)]
    rules = (
        [fr["service"] for fr in frames if fr.get("actions") and _is_active(user_frames.get(fr["service"]))],
        [s for s in sys_svcs if s in changed and _is_active(user_frames.get(s))],
        [s for s in active_users if s in changed],
        [s for s in sys_svcs if _is_active(user_frames.get(s))],
        active_users,
        sys_svcs,
    )
    for cands in rules:
        if cands:
            return cands[0]
    return None


def dialogue_turns(d: dict, *, file: str, registry: WorkflowRegistry, stats: LoadStats,
                   corpus: str, slot_name: Callable[[str, str], str] = lambda svc, s: s,
                   generic_actions: Optional[Callable[[list, str], list]] = None) -> list[Turn]:
    """Walk one SGD-format dialogue and build a Turn per system turn.

    ``slot_name(service, raw)`` lets a caller rename slots (identity for SGD);
    ``generic_actions(actions, service)`` resolves a turn's domain-less acts
    (MultiWOZ ``general-*``/``Booking-*``, stored under ``_generic_actions``).
    """
    did = str(d.get("dialogue_id", "?"))
    turns_raw = d.get("turns")
    if not isinstance(turns_raw, list):
        raise SageInputError(f"dialogue {did}: 'turns' must be a list", file=file, field="turns")
    fname = Path(file).name
    services = list(d.get("services", []) or [])
    states: dict[str, dict[str, str]] = {}  # service -> collapsed state after the last user turn
    history: list[Utterance] = []
    user_turn: Optional[dict] = None
    user_idx = -1
    before_states: dict[str, dict[str, str]] = {}
    changed: set[str] = set()
    out: list[Turn] = []
    for idx, t in enumerate(turns_raw):
        if not isinstance(t, dict) or "speaker" not in t:
            raise _err("each turn needs 'speaker' and 'utterance'", file, did, idx, "speaker")
        speaker = str(t["speaker"]).upper()
        text = str(t.get("utterance", ""))
        if speaker == "USER":
            before_states = dict(states)
            texts = [u.text for u in history]
            changed = set()
            for fr in t.get("frames", []) or []:
                st = fr.get("state")
                if st is None:
                    continue
                svc = fr.get("service")
                prev = states.get(svc, {})
                new = {}
                for raw_slot, vals in (st.get("slot_values") or {}).items():
                    slot = slot_name(svc, raw_slot)
                    new[slot] = collapse_values(vals, prev.get(slot), text, texts)
                if new != prev:
                    changed.add(svc)
                states[svc] = new
            user_turn, user_idx = t, idx
            history.append(Utterance("user", text))
            continue
        # SYSTEM turn
        if user_turn is None or user_idx != idx - 1:
            stats.skipped[SKIP_NO_USER] += 1
            history.append(Utterance("agent", text))
            continue
        user_frames = {fr.get("service"): fr for fr in user_turn.get("frames", []) or []}
        svc = _system_service(t, user_frames, changed)
        ufr = user_frames.get(svc)
        if svc is None or ufr is None:
            stats.skipped[SKIP_NO_SERVICE] += 1
            history.append(Utterance("agent", text))
            continue
        intent = (ufr.get("state") or {}).get("active_intent", NONE_INTENT)
        if not intent or intent == NONE_INTENT:
            stats.skipped[SKIP_NONE] += 1
            history.append(Utterance("agent", text))
            continue
        wid = f"{svc}:{intent}"
        if wid not in registry:
            raise _err(f"workflow '{wid}' is not in the schema ({registry.source or 'registry'})",
                       file, did, idx, "active_intent")
        spec = registry.get(wid)
        u_t = str(user_turn.get("utterance", ""))
        sb = dict(before_states.get(svc, {}))
        sa = dict(states.get(svc, {}))
        for fld, st in (("state_before", sb), ("state_after", sa)):
            for s in st:
                if not spec.has_slot(s):
                    raise _err(f"slot '{s}' is not in the schema of {wid}", file, did, idx, f"{fld}.{s}")
        uvals = _user_values(ufr, u_t, spec)
        for uv in uvals:
            uv.slot = slot_name(svc, uv.slot)
            if not spec.has_slot(uv.slot):
                raise _err(f"slot '{uv.slot}' is not in the schema of {wid}", file, did, idx, "user_values.slot")
        sys_frame = next((fr for fr in t.get("frames", []) or [] if fr.get("service") == svc), None)
        if t.get("_generic_actions") and generic_actions is not None:
            extra = generic_actions(t["_generic_actions"], svc)
            sys_frame = dict(sys_frame or {"service": svc})
            sys_frame["actions"] = list(sys_frame.get("actions", [])) + extra
        acts = _agent_acts(sys_frame)
        for a in acts or []:
            if a.slot:
                a.slot = slot_name(svc, a.slot)
        out.append(Turn(
            turn_id=f"{did}:{idx}", dialogue_id=did, workflow=wid,
            history=[Utterance(u.speaker, u.text) for u in history[:-1]], user=u_t, agent=text,
            state_before=sb, state_after=sa, user_values=uvals, agent_acts=acts, gold=None,
            meta={"corpus": corpus, "file": fname, "services": list(services)}))
        history.append(Utterance("agent", text))
    return out


def load_dialogue_files(paths: Any, registry: WorkflowRegistry, *, corpus: str, pattern: str,
                        prepare: Optional[Callable[[dict, str], dict]] = None,
                        slot_name: Callable[[str, str], str] = lambda svc, s: s,
                        generic_actions: Optional[Callable[[list, str], list]] = None) -> LoadedTurns:
    """Shared driver: files -> dialogues -> turns, with stats and errors."""
    files = expand_paths(paths, pattern, f"{corpus} dialogue")
    stats = LoadStats(corpus=corpus)
    turns: list[Turn] = []
    for f in files:
        raw = read_json(f)
        if isinstance(raw, dict) and "turns" in raw:
            raw = [raw]
        if not isinstance(raw, list):
            raise SageInputError("expected a JSON list of dialogues", file=str(f))
        stats.files += 1
        n0 = len(turns)
        for i, d in enumerate(raw):
            check_dialogue_shape(d, str(f), i)
            if prepare is not None:
                d = prepare(d, str(f))
                check_dialogue_shape(d, str(f), i)
            stats.dialogues += 1
            turns.extend(dialogue_turns(d, file=str(f), registry=registry, stats=stats,
                                        corpus=corpus, slot_name=slot_name,
                                        generic_actions=generic_actions))
        if len(turns) == n0 and len(files) == 1:
            raise no_turns_error(str(f), corpus)
    if not turns:
        raise no_turns_error(str(files[0]), corpus)
    stats.turns = len(turns)
    stats.log()
    return LoadedTurns(turns, stats)


def load_sgd_dialogues(paths: Any, registry: WorkflowRegistry) -> LoadedTurns:
    """SGD ``dialogues_*.json`` (a file, list of files or folder) -> turns.

    One Turn per system turn whose user frame has an active intent; turns with
    intent NONE are skipped and counted in ``result.stats.skipped`` (also logged).
    """
    return load_dialogue_files(paths, registry, corpus="sgd", pattern="dialogues_*.json")


# --- SGD-X ---------------------------------------------------------------------
class SgdxMapping(dict):
    """``{orig_service: {orig_slot: variant_slot}}`` plus the service and intent renames.

    ``services``: orig service -> variant service (SGD-X appends the variant
    number: Restaurants_2 -> Restaurants_21 in v1); ``intents``:
    (orig service, orig intent) -> variant intent.
    """

    def __init__(self):
        super().__init__()
        self.services: dict[str, str] = {}
        self.intents: dict[tuple[str, str], str] = {}


def _by_service(reg: WorkflowRegistry) -> dict[str, list[WorkflowSpec]]:
    out: dict[str, list[WorkflowSpec]] = {}
    for spec in reg:  # registry keeps schema order (intents in file order)
        out.setdefault(spec.service, []).append(spec)
    return out


def _match_service(orig: str, variants: list[str], used: set[str]) -> Optional[str]:
    if orig in variants and orig not in used:
        return orig
    cands = [v for v in variants if v not in used and v.startswith(orig) and v[len(orig):].isdigit()]
    return cands[0] if len(cands) == 1 else None


def sgdx_slot_map(orig_registry: WorkflowRegistry, variant_registry: WorkflowRegistry) -> SgdxMapping:
    """Align an SGD-X variant schema with the original, slot by slot.

    SGD-X keeps services, slots and intents in the same order and only renames
    them, so alignment is positional within a service; services are matched by
    name (exact, or the original name plus SGD-X's numeric suffix), falling back
    to position. A service whose slot or intent counts differ is an error.
    """
    o_by, v_by = _by_service(orig_registry), _by_service(variant_registry)
    o_names, v_names = list(o_by), list(v_by)
    mapping = SgdxMapping()
    used: set[str] = set()
    for i, osvc in enumerate(o_names):
        vsvc = _match_service(osvc, v_names, used)
        if vsvc is None and i < len(v_names) and len(o_names) == len(v_names):
            vsvc = v_names[i]
        if vsvc is None:
            raise SageInputError(f"service '{osvc}' has no counterpart in the variant schema",
                                 file=variant_registry.source or None)
        used.add(vsvc)
        ospecs, vspecs = o_by[osvc], v_by[vsvc]
        oslots, vslots = list(ospecs[0].slots), list(vspecs[0].slots)
        if len(oslots) != len(vslots) or len(ospecs) != len(vspecs):
            raise SageInputError(f"service '{osvc}' and variant '{vsvc}' differ in slot or intent count",
                                 file=variant_registry.source or None)
        mapping.services[osvc] = vsvc
        mapping[osvc] = dict(zip(oslots, vslots))
        for o, v in zip(ospecs, vspecs):
            mapping.intents[(osvc, o.intent)] = v.intent
    return mapping


def remap_turns(turns: Iterable[Turn], mapping: SgdxMapping, variant_registry: WorkflowRegistry) -> list[Turn]:
    """Copies of ``turns`` expressed in the variant schema (workflow, states, values, acts).

    Utterances are unchanged: SGD-X paraphrases the schema, not the dialogues.
    Slots outside the mapping (e.g. the act slot 'intent') are kept as they are.
    """
    out = []
    for t in turns:
        svc, intent = t.workflow.split(":", 1)
        if svc not in mapping:
            raise SageInputError(f"turn {t.turn_id}: service '{svc}' is not in the SGD-X mapping", field="workflow")
        slots = mapping[svc]
        vsvc = mapping.services.get(svc, svc)
        vint = mapping.intents.get((svc, intent), intent)
        wid = f"{vsvc}:{vint}"
        variant_registry.get(wid)
        n = copy.deepcopy(t)
        n.workflow = wid
        n.state_before = {slots.get(k, k): v for k, v in t.state_before.items()}
        n.state_after = {slots.get(k, k): v for k, v in t.state_after.items()}
        for uv in n.user_values or []:
            uv.slot = slots.get(uv.slot, uv.slot)
        for a in n.agent_acts or []:
            if a.slot:
                a.slot = slots.get(a.slot, a.slot)
            if a.slot == "intent" and a.value:
                a.value = mapping.intents.get((svc, a.value), a.value)
        n.meta = dict(t.meta, sgdx_variant=variant_registry.source, orig_workflow=t.workflow)
        out.append(n)
    return out


def services_with_dialogues(folder: Any) -> set[str]:
    """Services that have dialogues in an SGD split folder (empty when it is not there or a file is unreadable). Not the
    split's schema: SGD train's lists 26 services, its dialogues hold 20 (no Travel_1, Hotels_1, Weather_1, ...), and a
    service no model was fitted on a dialogue of is new, whatever the schema file says."""
    import json
    out: set[str] = set()
    for f in sorted(Path(folder).glob("dialogues_*.json")):
        try:
            out.update(svc for d in json.loads(f.read_text(encoding="utf-8")) for svc in d.get("services", ()))
        except (OSError, ValueError, TypeError, AttributeError):
            return set()
    return out


def service_domain(service: str) -> str:
    """An SGD service's domain: its name without the trailing number (``Hotels_4`` -> ``Hotels``)."""
    import re
    return re.sub(r"_\d+$", "", service)
