"""ABCD conversations -> Turns against the action-grounded workflows of ``sage_core.corpora.abcd.workflows``.

ABCD annotates the agent's *actions* (name + entered values, in the
``delexed`` targets) and the customer scenario (personal/order/product
values), but not per-utterance slot values or dialogue acts. So:

- a Turn is one agent block: the agent utterances and actions between two
  customer messages (blocks with actions only get ``meta.action_only``);
  u_t = the customer messages since the previous block, joined by a space;
- state = values the agent entered via actions so far plus values the
  customer supplied: the scenario's personal/order/product values found in
  the customer text as whole tokens (case-insensitive, longest first), put
  in the workflow slot of the same name, or else in the slot an action of
  this conversation entered that value into (e.g. a phone number entered
  with Enter Details goes to ``details_slotval``);
- action values go to a slot by, in order: the scenario field they equal,
  the action field whose enumerable values contain them, position (when the
  counts match), else the action's generic ``*_slotval`` field;
- agent REQUEST acts come from request cues ("may I have your name") mapped
  to slots by keyword — HEURISTIC, confidence 0.9; ``agent_acts`` is None when
  no cue was found so the compiler can run its own extraction;
- values/requests for fields outside the subflow's workflow are not put in the
  state; they are kept in ``meta`` and counted in ``stats.unmapped_slots``.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional

from sage_core.corpora.abcd.workflows import ActionWorkflowSpec
from sage_core.corpora.common import LoadedTurns, LoadStats, no_turns_error, read_json
from sage_core.data.errors import SageInputError
from sage_core.data.types import AgentAct, Turn, UserValue, Utterance
from sage_core.specs.workflow import WorkflowRegistry, WorkflowSpec

SCENARIO_ALIASES = {"member_level": "membership_level"}
REQUEST_CONFIDENCE = 0.9

_CUE = re.compile(
    r"\b(may|can|could) i (please )?(have|get|ask|know|grab|confirm)\b|\bwhat(?: is|'s|s) (your|the)\b"
    r"|\b(could|can|would|will) you (please )?(give|provide|tell|send|confirm|share|verify)\b"
    r"|\byou (would|could|can) (please )?(give|provide|tell|send)\b|\bi(?:'d| would| will)? (just )?need\b"
    r"|\bplease (provide|give|tell|send|enter|confirm)\b|\bneed your\b", re.I)
# slot -> keyword pattern; applied in order, each match blanked so 'email address' is not also 'address'
_KEYWORDS = [
    ("username", r"\buser ?name\b"),
    ("email", r"\be-?mail(?: address)?\b"),
    ("order_id", r"\border (?:id|number|#)\b"),
    ("account_id", r"\baccount (?:id|number)\b"),
    ("zip_code", r"\bzip(?: code)?\b|\bpostal code\b"),
    ("phone", r"\b(?:tele)?phone(?: number)?\b"),
    ("pin_number", r"\bpin(?: number)?\b"),
    ("security_answer", r"\bsecurity (?:answer|question)\b|\bmaiden name\b"),
    ("membership_level", r"\bmembership(?: level| status)?\b|\bmember level\b"),
    ("payment_method", r"\bpayment method\b"),
    ("customer_name", r"\b(?:full )?name\b"),
    ("full_address", r"\b(?:full |shipping |home |street )?address\b"),
]


def request_slots(text: str, spec: WorkflowSpec) -> tuple[list[str], list[str]]:
    """(slots requested that the workflow has, requested fields it does not have)."""
    found: list[str] = []
    for sent in re.split(r"(?<=[.?!])\s+", text):
        if not (_CUE.search(sent) or (sent.strip().endswith("?") and re.search(r"\byour\b", sent, re.I))):
            continue
        rest = sent
        for slot, pat in _KEYWORDS:
            rx = re.compile(pat, re.I)
            if rx.search(rest):
                rest = rx.sub(" ", rest)
                if slot == "full_address" and "full_address" not in spec.slots and "street_address" in spec.slots:
                    slot = "street_address"
                if slot not in found:
                    found.append(slot)
    return [s for s in found if s in spec.slots], [s for s in found if s not in spec.slots]


def _scenario_values(scenario: dict) -> list[tuple[str, str]]:
    """(field, value) pairs the customer may state: personal/order fields, product names and amounts."""
    out: list[tuple[str, str]] = []
    for part in ("personal", "order"):
        for k, v in (scenario.get(part) or {}).items():
            if k in ("products",) or v in (None, ""):
                continue
            out.append((SCENARIO_ALIASES.get(k, k), str(v)))
    prod = scenario.get("product") or {}
    for n in prod.get("names", []) or []:
        out.append(("product", str(n).replace("_", " ")))
    for a in prod.get("amounts", []) or []:
        out.append(("amount", str(a)))
    return out


def _find(text: str, value: str) -> Optional[tuple[int, int]]:
    """Case-insensitive whole-token match (a username inside an e-mail address does not count)."""
    if len(value) < 2:
        return None
    m = re.search(r"(?<![\w@.])" + re.escape(value) + r"(?![\w@]|\.\w)", text, re.I)
    return (m.start(), m.end()) if m else None


def _action_slots(action: str, values: list[str], spec_actions: dict[str, list[str]],
                  scenario: list[tuple[str, str]], enumerable: dict[str, list[str]]) -> list[Optional[str]]:
    """One slot (or None) per value an action entered; see the module docstring for the order."""
    fields = spec_actions.get(action, [])
    out: list[Optional[str]] = []
    used: set[str] = set()
    for i, v in enumerate(values):
        vl = str(v).lower()
        slot = next((k for k, sv in scenario if sv.lower() == vl and k in fields and k not in used), None)
        if slot is None:
            slot = next((f for f in fields if f not in used and vl in [e.lower() for e in enumerable.get(f, [])]),
                        None)
        if slot is None and len(values) == len(fields) and fields[i] not in used:
            slot = fields[i]
        if slot is None:
            slot = next((f for f in fields if f.endswith("_slotval") and f not in used), None)
        if slot is not None:
            used.add(slot)
        out.append(slot)
    return out


def _resolve_subflow(scenario: dict, delexed: list, registry: WorkflowRegistry) -> Optional[str]:
    flow = str(scenario.get("flow", ""))
    cands = [str(scenario.get("subflow", ""))]
    cands.append(re.sub(r"_\d+$", "", cands[0]))  # storewide 'timing_4' -> 'timing'
    for d in delexed or []:
        if isinstance(d, dict) and d.get("targets"):
            cands.append(str(d["targets"][0]))
            break
    for c in cands:
        if f"{flow}:{c}" in registry:
            return f"{flow}:{c}"
    return None


class _Conversation:
    """State machine over one conversation's events."""

    def __init__(self, convo: dict, file: str, registry: WorkflowRegistry, stats: LoadStats,
                 actions: dict[str, list[str]], enumerable: dict[str, list[str]]):
        self.c, self.file, self.stats = convo, file, stats
        self.cid = str(convo.get("convo_id", "?"))
        self.actions, self.enumerable = actions, enumerable
        scen = convo.get("scenario")
        orig = convo.get("original")
        if not isinstance(scen, dict) or not isinstance(orig, list):
            raise SageInputError(f"conversation {self.cid}: needs 'scenario' and 'original'", file=file,
                                 field="original")
        self.scenario = _scenario_values(scen)
        self.delexed = convo.get("delexed") if isinstance(convo.get("delexed"), list) else []
        wid = _resolve_subflow(scen, self.delexed, registry)
        if wid is None:
            raise SageInputError(f"conversation {self.cid}: subflow '{scen.get('flow')}:{scen.get('subflow')}' "
                                 f"is not in the ABCD workflows", file=file, field="scenario.subflow")
        self.wid, self.spec = wid, registry.get(wid)
        self.events = []
        for i, ev in enumerate(orig):
            if not isinstance(ev, (list, tuple)) or len(ev) < 2:
                raise SageInputError(f"conversation {self.cid}: event {i} must be [speaker, text]", file=file,
                                     field=f"original[{i}]")
            d = self.delexed[i] if i < len(self.delexed) and isinstance(self.delexed[i], dict) else {}
            self.events.append((str(ev[0]).lower(), str(ev[1]), d))
        self.entered = self._entered_slots()

    def _entered_slots(self) -> dict[str, str]:
        """value (lower) -> workflow slot, from every action in the conversation (annotated)."""
        out: dict[str, str] = {}
        for sp, _, d in self.events:
            t = d.get("targets") or []
            if sp == "action" and len(t) >= 4 and t[2]:
                vals = [str(v) for v in (t[3] or [])]
                for v, s in zip(vals, _action_slots(t[2], vals, self.actions, self.scenario, self.enumerable)):
                    if s and s in self.spec.slots:
                        out.setdefault(v.lower(), s)
        return out

    def _customer_values(self, text: str) -> list[UserValue]:
        """Scenario values found in the customer text, longest first, each span used once."""
        out: list[UserValue] = []
        masked = text
        for key, value in sorted(self.scenario, key=lambda kv: -len(kv[1])):
            span = _find(masked, value)
            if span is None:
                continue
            slot = key if key in self.spec.slots else self.entered.get(value.lower())
            if slot is None:
                self.stats.unmapped_slots[f"customer:{key}"] += 1
                continue
            masked = masked[:span[0]] + "\0" * (span[1] - span[0]) + masked[span[1]:]
            if any(u.slot == slot for u in out):
                continue
            out.append(UserValue(slot, text[span[0]:span[1]], span))
        return sorted(out, key=lambda u: u.span)

    @staticmethod
    def _put(state: dict[str, str], slot: str, value: str) -> None:
        if state.get(slot, "").lower() != value.lower():  # case-only changes are not writes
            state[slot] = value

    def turns(self) -> list[Turn]:
        out: list[Turn] = []
        state: dict[str, str] = {}
        history: list[Utterance] = []
        pending_user: list[str] = []  # customer messages since the last block
        i, n = 0, len(self.events)
        while i < n:
            sp, text, d = self.events[i]
            if sp == "customer":
                pending_user.append(text)
                i += 1
                continue
            j = i
            while j < n and self.events[j][0] != "customer":
                j += 1
            block = self.events[i:j]
            before = dict(state)
            u_t = " ".join(pending_user)
            uvals = self._customer_values(u_t)
            for uv in uvals:
                self._put(state, uv.slot, uv.value)
            agent_texts, acts_meta = [], []
            for bsp, btext, bd in block:
                if bsp == "agent":
                    agent_texts.append(btext)
                    continue
                if bsp != "action":
                    raise SageInputError(f"conversation {self.cid}: unknown speaker '{bsp}'", file=self.file,
                                         field="original")
                t = bd.get("targets") or []
                if len(t) < 4 or not t[2]:
                    self.stats.skipped["action without delexed target"] += 1
                    acts_meta.append({"action": None, "text": btext})
                    continue
                vals = [str(v) for v in (t[3] or [])]
                slots = _action_slots(t[2], vals, self.actions, self.scenario, self.enumerable)
                acts_meta.append({"action": t[2], "values": vals, "slots": slots, "text": btext})
                for v, s in zip(vals, slots):
                    if s and s in self.spec.slots:
                        self._put(state, s, v)
                    else:
                        self.stats.unmapped_slots[f"action:{t[2]}:{s or '?'}"] += 1
            agent = " ".join(agent_texts)
            meta: dict[str, Any] = {"corpus": "abcd", "file": Path(self.file).name, "convo_id": self.cid,
                                    "flow": self.spec.service, "subflow": self.spec.intent}
            if acts_meta:
                meta["actions"] = acts_meta
            agent_acts = None
            if agent_texts:
                req, unknown = request_slots(agent, self.spec)
                if req:
                    agent_acts = [AgentAct("REQUEST", s, None, REQUEST_CONFIDENCE) for s in req]
                if unknown:
                    meta["requests_outside_workflow"] = unknown
            else:
                agent = " ".join(f"[action] {a['text']}" for a in acts_meta)
                meta["action_only"] = True
            out.append(Turn(turn_id=f"{self.cid}:{i}", dialogue_id=self.cid, workflow=self.wid,
                            history=[Utterance(u.speaker, u.text) for u in history], user=u_t, agent=agent,
                            state_before=before,
                            state_after=dict(state), user_values=uvals, agent_acts=agent_acts,
                            gold=None, meta=meta))
            history.extend(Utterance("user", t) for t in pending_user)
            history.extend(Utterance("agent", t) for t in agent_texts)
            pending_user = []
            i = j
        return out


def load_abcd_conversations(path: str | Path, registry: WorkflowRegistry,
                            ontology_path: Optional[str | Path] = None) -> LoadedTurns:
    """ABCD conversations (a list, or ``{split: [...]}`` as in abcd_v1.1.json) -> turns.

    ``ontology_path`` (default: ontology.json beside the file) supplies the
    action fields and enumerable values used to place action values in slots.
    """
    path = str(path)
    raw = read_json(path)
    if isinstance(raw, dict):
        convos = [c for v in raw.values() if isinstance(v, list) for c in v]
    elif isinstance(raw, list):
        convos = raw
    else:
        raise SageInputError("expected a list of ABCD conversations", file=path)
    onto_p = Path(ontology_path) if ontology_path else Path(path).parent / "ontology.json"
    actions: dict[str, list[str]] = {}
    enumerable: dict[str, list[str]] = {}
    if onto_p.is_file():
        onto = read_json(onto_p)
        actions = {a: list(s) for cat in (onto.get("actions") or {}).values() for a, s in cat.items()}
        enumerable = (onto.get("values") or {}).get("enumerable", {}) or {}
    else:  # fall back to the action groups the registry carries
        for spec in registry:
            if isinstance(spec, ActionWorkflowSpec):
                for g in spec.groups:
                    actions.setdefault(g.action, g.slots)
    stats = LoadStats(corpus="abcd", files=1)
    turns: list[Turn] = []
    for c in convos:
        if not isinstance(c, dict):
            raise SageInputError("each conversation must be an object", file=path)
        stats.dialogues += 1
        turns.extend(_Conversation(c, path, registry, stats, actions, enumerable).turns())
    if not turns:
        raise no_turns_error(path, "abcd")
    stats.turns = len(turns)
    stats.log()
    return LoadedTurns(turns, stats)
