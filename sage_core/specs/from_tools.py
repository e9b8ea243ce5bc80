"""Workflow specs from tool schemas: each tool is a workflow, its (flattened) parameters are the slots.

JSON schema says what a tool takes; it cannot say which calls write the
database, what must happen first, or where an argument's value may come
from. A small policy YAML of ours adds that (see README, "Tool-calling
agents"):

```yaml
service: shop                       # workflow ids are <service>:<tool>
consequential: [place_order]        # write calls: need the user's explicit confirmation
requires_called:                    # tool -> tools that must have run before it ("*": every tool
  "*": [find_user]                  #  except the ones listed under 'exempt')
  place_order: [get_cart]
exempt: [find_user, think]          # never need a prerequisite
ask_order: [[user_id], [order_id]]  # fields the agent asks the user for, in this order
field_words: {user_id: [user id, username]}   # how the agent names a field when it asks for it
grounding:                          # argument -> tools whose outputs may ground it (else: any source)
  place_order.payment_id: [get_user]
free_text: [thought, summary]       # the agent's own words, never checked for support
request_words: {place_order: [order, buy]}   # how a user asks for a write; a request no call carries out by
                                             #  the end of the dialogue is a dropped user request (IUV)
handoff: [transfer_to_human]        # a request may end in a hand-off to a human instead
max_items: 5                        # array slots are generated for indices 0..max_items-1
one_call_per_message: true          # a message may hold one tool call and no reply with it (default false:
                                    #  parallel calls and a reply beside a call are normal in OpenAI transcripts)
now: "2024-05-15T15:00:00"          # the policy's current time (for within_hours)
record_rules:                       # rules on a write checked against the record a lookup returned; the
  - tool: add_bags                  #  record is the latest output of `record` whose `key` equals the call's
    record: get_order               #  `key` argument; without one the rule is not checked
    key: order_id
    not_below: {bags: bags}         # call argument >= record field (e.g. bags can be added, not removed)
  - tool: edit_people
    record: get_order
    key: order_id
    same_count: {people: people}    # as many items in the call's array as in the record's
  - tool: cancel_order
    record: get_order
    key: order_id
    allowed_if_any:                 # the write is allowed only if one condition holds on the record;
      - {field: created_at, within_hours: 24}       # `unsure: true`: the condition holding leaves the
      - {field: tier, in: [gold]}                   #  verdict open (the rest of it is not checkable)
      - {field: insured, in: ["yes"], unsure: true}
      - {user_says: [store cancelled], unsure: true}  # a user's claim the log cannot verify
  - tool: change_items
    record: get_order
    key: order_id
    frozen: {arg: items, by: [item_id], when: {kind: [final_sale]}}   # the array may not change when the
                                                                      #  record's field holds one of the values
  - tool: place_order
    record: get_user
    key: user_id
    allowance:                      # charged == max(0, total - len(items) * table[record field][argument])
      charged: paid_boxes
      total: boxes
      items: people
      per_item: {record_field: tier, arg: speed, table: {regular: {standard: 0, express: 1}, gold: {standard: 1,
                                                                                               express: 2}}}
  - tool: place_order
    record: get_user
    key: user_id
    kind_limits:                    # at most max[kind] items of each kind; kind read in the record at the path
      arg: payments
      id: payment_id
      kind: "payment_methods.{id}.source"
      max: {gift_card: 3, credit_card: 1}
  - tool: cancel_order
    record: get_order
    key: order_id
    not_started: {field: legs, date: date}   # no item of the record's list dated before `now`
must_ask:                           # argument -> words: an earlier agent reply (or the user) must have raised it
  place_order.insurance: [insurance]
option_preferences:                 # the user's stated preference among the options the agent's searches returned
  - tools: [place_order]            #  (IUV when the call picks one that another option of the same search beats)
    arg: items                      # the call's array whose items pick options
    keys: [item_id]                 # item fields that identify a part of an option
    options_from: [search_items]    # their outputs: a list of options, an option one part or a list of parts
    available: "stock.{speed}"      # optional: a part whose field here is 0 is no option ({x}: the call's argument x)
    prefer:                         # words the user says -> what an option must have least of
      - {words: [cheapest, lowest price], least: "price.{speed}"}   # a part's field, summed over the option
      - {words: [nonstop, direct], least: "@parts"}                  # the number of parts
      - {words: [fastest], least: "@span:departs:arrives"}           # first part's departs to last's arrives
                                                                     #  (clock times HH:MM[:SS][+days])
    time_window: {departs: departs, arrives: arrives}   # optional: a window the user states ("after 8 am", "the
                                    #  morning flights") binds the first part's departure, or the last part's arrival
                                    #  when the sentence speaks of arriving: IUV when the call picks an option outside
                                    #  it while one inside was available; rivals outside it do not count above
spending_limits:                    # the most the user said they would pay ("up to $600", "my budget is $1,000")
  - tools: [place_order, change_order]   # writes whose charge it bounds (IUV when one charges more)
    key: order_id                   # the record's id: the call's answer and the latest earlier answer about it
    paid: "payments[].amount"       # summed in each; the charge is the call's answer minus the earlier one (0 without)
```

Array parameters are flattened to indexed paths (``passengers[0].first_name``,
``item_ids[1]``); required paths are those of index 0 of a required array.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Optional

import yaml

from sage_core.data.errors import SageInputError
from sage_core.specs.workflow import SlotSpec, WorkflowRegistry, WorkflowSpec, infer_value_type

REPLY_INTENT = "reply"  # the workflow of assistant messages to the user
ALL_TOOLS = "*"
DEFAULT_MAX_ITEMS = 5


@dataclass
class ToolPolicy:
    """What JSON schema cannot say about a tool set (our policy YAML)."""

    service: str = "tools"
    consequential: list[str] = field(default_factory=list)
    requires_called: dict[str, list[str]] = field(default_factory=dict)
    exempt: list[str] = field(default_factory=list)
    ask_order: list[list[str]] = field(default_factory=list)
    field_words: dict[str, list[str]] = field(default_factory=dict)
    grounding: dict[str, list[str]] = field(default_factory=dict)
    free_text: list[str] = field(default_factory=list)
    request_words: dict[str, list[str]] = field(default_factory=dict)  # tool -> how a user asks for it
    handoff: list[str] = field(default_factory=list)  # tools that hand the user to a human (a request may end there)
    max_items: int = DEFAULT_MAX_ITEMS
    one_call_per_message: bool = False  # the policy forbids parallel calls and a reply in the same message as a call
    now: Optional[str] = None  # the policy's current time (ISO), for record rules with within_hours
    record_rules: list[dict[str, Any]] = field(default_factory=list)  # checks of a write against a looked-up record
    must_ask: dict[str, list[str]] = field(default_factory=dict)  # tool.argument -> words the agent must have asked with
    option_preferences: list[dict[str, Any]] = field(default_factory=list)  # user preferences among searched options
    spending_limits: list[dict[str, Any]] = field(default_factory=list)  # writes whose charge a user's cap bounds
    source: str = ""

    def prerequisites(self, tool: str) -> list[str]:
        """Tools that must have been called (successfully) before ``tool``; ``a|b``: either one."""
        own = list(self.requires_called.get(tool, []))
        if tool in self.exempt:
            return own
        return list(dict.fromkeys(list(self.requires_called.get(ALL_TOOLS, [])) + own))

    def grounding_tools(self, tool: str, path: str) -> Optional[list[str]]:
        """Tools whose outputs may ground ``path`` of ``tool`` (None: any user message or tool output)."""
        generic = index_free(path)
        for key in (f"{tool}.{path}", f"{tool}.{generic}", path, generic):
            if key in self.grounding:
                return list(self.grounding[key])
        return None

    def is_free_text(self, path: str) -> bool:
        leaf = index_free(path).split(".")[-1]
        return leaf in self.free_text or index_free(path) in self.free_text

    def to_dict(self) -> dict[str, Any]:
        return {"service": self.service, "consequential": list(self.consequential),
                "requires_called": {k: list(v) for k, v in self.requires_called.items()},
                "exempt": list(self.exempt), "ask_order": [list(g) for g in self.ask_order],
                "field_words": {k: list(v) for k, v in self.field_words.items()},
                "grounding": {k: list(v) for k, v in self.grounding.items()},
                "free_text": list(self.free_text),
                "request_words": {k: list(v) for k, v in self.request_words.items()},
                "handoff": list(self.handoff), "max_items": self.max_items,
                "one_call_per_message": self.one_call_per_message, "now": self.now,
                "record_rules": [dict(r) for r in self.record_rules],
                "must_ask": {k: list(v) for k, v in self.must_ask.items()},
                "option_preferences": [dict(r) for r in self.option_preferences],
                "spending_limits": [dict(r) for r in self.spending_limits]}


@dataclass
class ToolWorkflowSpec(WorkflowSpec):
    """A workflow that is one tool (or the agent's replies): W plus the tool policy."""

    tool: str = ""  # tool name; REPLY_INTENT for assistant messages to the user
    consequential: bool = False
    policy: ToolPolicy = field(default_factory=ToolPolicy)
    parameters: dict[str, Any] = field(default_factory=dict)  # the tool's JSON schema


def index_free(path: str) -> str:
    """``passengers[0].first_name`` -> ``passengers[].first_name``."""
    return re.sub(r"\[\d+\]", "[]", path)


def _err(msg: str, file: str, fld: Optional[str] = None) -> SageInputError:
    return SageInputError(msg, file=file, field=fld)


def _string_type(name: str, schema: dict) -> str:
    desc = str(schema.get("description", "")).lower()
    if "yyyy-mm-dd" in desc or name in ("dob", "birthday", "date_of_birth"):
        return "date"
    vt = infer_value_type(name, False, [], desc)
    return vt if vt in ("date", "time") else "text"


def flatten_schema(schema: Any, prefix: str, required: bool, max_items: int, file: str,
                   where: str) -> list[tuple[str, SlotSpec, bool]]:
    """(path, SlotSpec, required) for every leaf of a JSON-schema parameter."""
    if not isinstance(schema, dict):
        raise _err(f"{where}: parameter '{prefix}' must be a JSON-schema object", file, prefix)
    leaf = re.sub(r"\[\d+\]$", "", prefix.split(".")[-1])
    typ = schema.get("type")
    if isinstance(typ, list):  # ["string", "null"]
        typ = next((t for t in typ if t != "null"), None)
    desc = str(schema.get("description", ""))
    if "enum" in schema:
        pv = [str(v).lower() if isinstance(v, bool) else str(v) for v in schema["enum"]]
        vt = "bool" if set(v.lower() for v in pv) <= {"true", "false"} else "categorical"
        return [(prefix, SlotSpec(prefix, desc, True, pv, vt), required)]
    if typ == "object" or (typ is None and "properties" in schema):
        props = schema.get("properties") or {}
        if not isinstance(props, dict):
            raise _err(f"{where}: 'properties' of '{prefix or 'parameters'}' must be an object", file, prefix)
        req = set(schema.get("required") or [])
        out = []
        for name, sub in props.items():
            path = f"{prefix}.{name}" if prefix else str(name)
            out += flatten_schema(sub, path, required and name in req, max_items, file, where)
        return out
    if typ == "array":
        items = schema.get("items") or {"type": "string"}
        n = int(schema.get("maxItems") or max_items)
        out = []
        for i in range(n):
            out += flatten_schema(items, f"{prefix}[{i}]", required and i == 0, max_items, file, where)
        return out
    if typ in ("integer", "number"):
        return [(prefix, SlotSpec(prefix, desc, False, [], "number"), required)]
    if typ == "boolean":
        return [(prefix, SlotSpec(prefix, desc, True, ["true", "false"], "bool"), required)]
    if typ in ("string", None):
        return [(prefix, SlotSpec(prefix, desc, False, [], _string_type(leaf, schema)), required)]
    raise _err(f"{where}: parameter '{prefix}' has unsupported JSON-schema type {typ!r}", file, prefix)


def read_tools(path: str | Path) -> list[dict[str, Any]]:
    """An OpenAI function-calling tool list (``[{"type": "function", "function": {...}}]`` or bare functions)."""
    p = str(path)
    try:
        with open(p, encoding="utf-8") as fh:
            raw = json.load(fh)
    except FileNotFoundError:
        raise _err("tools file not found", p) from None
    except json.JSONDecodeError as e:
        raise SageInputError(f"malformed JSON ({e.msg} at line {e.lineno} column {e.colno})", file=p,
                             line=e.lineno) from None
    if isinstance(raw, dict) and "tools" in raw:
        raw = raw["tools"]
    if not isinstance(raw, list) or not raw:
        raise _err("a tools file must be a non-empty JSON list of function definitions", p)
    return raw


def _functions(tools: list, file: str) -> list[dict[str, Any]]:
    out = []
    for i, t in enumerate(tools):
        fn = t.get("function", t) if isinstance(t, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise _err(f"tool #{i} needs a function name", file, f"[{i}].function.name")
        out.append(fn)
    return out


def read_policy(path: Optional[str | Path], service: Optional[str] = None) -> ToolPolicy:
    """Our policy YAML (None: an empty policy: nothing consequential, no ordering)."""
    if path is None:
        return ToolPolicy(service=service or "tools")
    p = str(path)
    try:
        with open(p, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh) or {}
    except FileNotFoundError:
        raise _err("policy file not found", p) from None
    except yaml.YAMLError as e:
        raise _err(f"malformed YAML: {e}", p) from None
    if not isinstance(raw, dict):
        raise _err("a tool policy must be a YAML mapping", p)
    if "tool_policy" in raw:  # a spec written by spec_to_yaml carries its policy under this key
        raw = raw["tool_policy"] or {}
    return policy_from_dict(raw, p, service)


def policy_from_dict(raw: dict, file: str, service: Optional[str] = None) -> ToolPolicy:
    def lst(key: str) -> list[str]:
        v = raw.get(key) or []
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise _err(f"'{key}' must be a list of names", file, key)
        return list(v)

    def mapping(key: str) -> dict[str, list[str]]:
        v = raw.get(key) or {}
        if not isinstance(v, dict):
            raise _err(f"'{key}' must be a mapping name -> list", file, key)
        out = {}
        for k, x in v.items():
            x = [x] if isinstance(x, str) else x
            if not isinstance(x, list) or not all(isinstance(s, str) for s in x):
                raise _err(f"'{key}.{k}' must be a list of names", file, f"{key}.{k}")
            out[str(k)] = list(x)
        return out

    order = raw.get("ask_order") or []
    if not isinstance(order, list) or not all(isinstance(g, list) for g in order):
        raise _err("'ask_order' must be a list of lists of field names", file, "ask_order")
    mi = raw.get("max_items", DEFAULT_MAX_ITEMS)
    if not isinstance(mi, int) or mi < 1:
        raise _err("'max_items' must be a positive integer", file, "max_items")
    now = raw.get("now")
    if now is not None:
        try:
            datetime.fromisoformat(str(now))
        except ValueError:
            raise _err(f"'now' must be an ISO date-time, got {now!r}", file, "now") from None
        now = str(now)
    rules = _record_rules(raw.get("record_rules") or [], file)
    if now is None and any("not_started" in r or any(c.get("within_hours") is not None
                                                     for c in r.get("allowed_if_any", [])) for r in rules):
        raise _err("a record rule uses within_hours or not_started but the policy has no 'now'", file, "now")
    ocpm = raw.get("one_call_per_message", False)
    if not isinstance(ocpm, bool):
        raise _err("'one_call_per_message' must be true or false", file, "one_call_per_message")
    return ToolPolicy(service=str(raw.get("service") or service or "tools"), consequential=lst("consequential"),
                      requires_called=mapping("requires_called"), exempt=lst("exempt"),
                      ask_order=[[str(s) for s in g] for g in order], field_words=mapping("field_words"),
                      grounding=mapping("grounding"), free_text=lst("free_text"),
                      request_words=mapping("request_words"), handoff=lst("handoff"), max_items=mi,
                      one_call_per_message=ocpm, now=now, record_rules=rules,
                      must_ask=mapping("must_ask"), option_preferences=_option_preferences(
                          raw.get("option_preferences") or [], file),
                      spending_limits=_spending_limits(raw.get("spending_limits") or [], file), source=file)


def _spending_limits(raw: Any, file: str) -> list[dict[str, Any]]:
    """Validate ``spending_limits`` (format in the module docstring)."""
    if not isinstance(raw, list):
        raise _err("'spending_limits' must be a list of rules", file, "spending_limits")
    for i, r in enumerate(raw):
        if not (isinstance(r, dict) and _names(r.get("tools")) and isinstance(r.get("key"), str) and r["key"]
                and isinstance(r.get("paid"), str) and re.fullmatch(r"[\w.]+\[\]\.[\w.]+", r["paid"])):
            raise _err("a spending limit needs 'tools' (list of names), 'key' (the record's id field) and 'paid' "
                       "(<list>[].<amount field> in the record)", file, f"spending_limits[{i}]")
    return [dict(r) for r in raw]


def _names(v: Any) -> bool:
    """A non-empty list of non-empty strings (tool names, keys, words)."""
    return isinstance(v, list) and bool(v) and all(isinstance(x, str) and x for x in v)


def _option_preferences(raw: Any, file: str) -> list[dict[str, Any]]:
    """Validate ``option_preferences`` (format in the module docstring)."""
    if not isinstance(raw, list):
        raise _err("'option_preferences' must be a list of rules", file, "option_preferences")

    for i, r in enumerate(raw):
        fld = f"option_preferences[{i}]"
        if not (isinstance(r, dict) and _names(r.get("tools")) and isinstance(r.get("arg"), str)
                and _names(r.get("keys")) and _names(r.get("options_from"))
                and isinstance(r.get("available", ""), str) and isinstance(r.get("prefer"), list) and r["prefer"]):
            raise _err("an option preference needs 'tools', 'options_from' and 'keys' (lists of names), 'arg' (the "
                       "call's array) and 'prefer' (a list of {words, least}); 'available' is an optional path",
                       file, fld)
        for k, pref in enumerate(r["prefer"]):
            if not (isinstance(pref, dict) and _names(pref.get("words")) and isinstance(pref.get("least"), str)
                    and pref["least"]):
                raise _err("a preference needs 'words' (list of phrases) and 'least' (a path in an option's parts, "
                           "@parts or @span:<start field>:<end field>)", file, f"{fld}.prefer[{k}]")
            if pref["least"].startswith("@") and pref["least"] != "@parts" and not re.fullmatch(
                    r"@span:[^:]+:[^:]+", pref["least"]):
                raise _err(f"unknown 'least' {pref['least']!r}: use a path, @parts or @span:<start>:<end>", file,
                           f"{fld}.prefer[{k}].least")
        tw = r.get("time_window")
        if tw is not None and not (isinstance(tw, dict) and set(tw) == {"departs", "arrives"}
                                   and all(isinstance(v, str) and v for v in tw.values())):
            raise _err("'time_window' needs 'departs' and 'arrives' (the clock-time fields of an option's parts)",
                       file, f"{fld}.time_window")
    return [dict(r) for r in raw]


RECORD_CHECKS = ("not_below", "same_count", "allowed_if_any", "frozen", "allowance", "kind_limits", "not_started")


def _record_rules(raw: Any, file: str) -> list[dict[str, Any]]:
    """Validate ``record_rules`` (format in the module docstring)."""
    if not isinstance(raw, list):
        raise _err("'record_rules' must be a list of rules", file, "record_rules")
    out = []
    for i, r in enumerate(raw):
        fld = f"record_rules[{i}]"
        if not isinstance(r, dict) or not all(isinstance(r.get(k), str) and r.get(k) for k in ("tool", "record", "key")):
            raise _err("a record rule needs 'tool', 'record' and 'key' names", file, fld)
        checks = [c for c in RECORD_CHECKS if c in r]
        if len(checks) != 1:
            raise _err(f"a record rule needs exactly one of {', '.join(RECORD_CHECKS)}", file, fld)
        c = checks[0]
        v = r[c]
        if c in ("not_below", "same_count"):
            if not isinstance(v, dict) or not v or not all(isinstance(k, str) and isinstance(x, str)
                                                          for k, x in v.items()):
                raise _err(f"'{c}' must map call arguments to record fields", file, f"{fld}.{c}")
        elif c == "allowed_if_any":
            if not isinstance(v, list) or not v:
                raise _err("'allowed_if_any' must be a non-empty list of conditions", file, f"{fld}.{c}")
            for k, cond in enumerate(v):
                ok = isinstance(cond, dict) and (
                    (isinstance(cond.get("user_says"), list) and cond.get("unsure") is True) or
                    (isinstance(cond.get("field"), str) and
                     isinstance(cond.get("within_hours"), (int, float)) != isinstance(cond.get("in"), list)))
                if not ok:
                    raise _err("a condition needs 'field' and one of 'within_hours' (number) or 'in' (list), or "
                               "'user_says' (list of phrases) with 'unsure: true'", file, f"{fld}.{c}[{k}]")
        elif c == "allowance":
            pi = v.get("per_item") if isinstance(v, dict) else None
            ok = isinstance(v, dict) and all(isinstance(v.get(k), str) for k in ("charged", "total", "items")) and \
                isinstance(pi, dict) and isinstance(pi.get("record_field"), str) and isinstance(pi.get("arg"), str) \
                and isinstance(pi.get("table"), dict) and all(
                    isinstance(row, dict) and all(isinstance(n, int) for n in row.values())
                    for row in pi["table"].values())
            if not ok:
                raise _err("'allowance' needs 'charged', 'total', 'items' (argument names) and 'per_item' with "
                           "'record_field', 'arg' and 'table' (record value -> argument value -> count)", file,
                           f"{fld}.{c}")
        elif c == "not_started":
            if not (isinstance(v, dict) and isinstance(v.get("field"), str) and isinstance(v.get("date"), str)):
                raise _err("'not_started' needs 'field' (a list in the record) and 'date' (its items' date key)", file,
                           f"{fld}.{c}")
        elif c == "kind_limits":
            ok = isinstance(v, dict) and all(isinstance(v.get(k), str) for k in ("arg", "id", "kind")) and \
                "{id}" in v["kind"] and isinstance(v.get("max"), dict) and \
                all(isinstance(n, int) for n in v["max"].values())
            if not ok:
                raise _err("'kind_limits' needs 'arg' (array), 'id' (item key), 'kind' (record path with {id}) and "
                           "'max' (kind -> count)", file, f"{fld}.{c}")
        else:  # frozen
            ok = isinstance(v, dict) and isinstance(v.get("arg"), str) and isinstance(v.get("by"), list) and \
                isinstance(v.get("when"), dict) and all(isinstance(x, list) for x in v["when"].values())
            if not ok:
                raise _err("'frozen' needs 'arg', 'by' (list of item keys) and 'when' (field -> list of values)", file,
                           f"{fld}.{c}")
        out.append(dict(r))
    return out


def registry_from_tools(tools: list[dict[str, Any]], policy: Optional[ToolPolicy] = None, *,
                        file: str = "<tools>", max_items: Optional[int] = None) -> WorkflowRegistry:
    """One ``ToolWorkflowSpec`` per tool plus ``<service>:reply`` for the agent's messages to the user."""
    policy = policy or ToolPolicy()
    n_items = max_items or policy.max_items
    fns = _functions(tools, file)
    names = {fn["name"] for fn in fns}
    for fld, listed in (("consequential", policy.consequential), ("exempt", policy.exempt),
                        ("request_words", list(policy.request_words)), ("handoff", policy.handoff),
                        ("record_rules", [t for r in policy.record_rules for t in (r["tool"], r["record"])]),
                        ("must_ask", [k.split(".")[0] for k in policy.must_ask]),
                        ("option_preferences", [t for r in policy.option_preferences
                                                for t in list(r["tools"]) + list(r["options_from"])]),
                        ("spending_limits", [t for r in policy.spending_limits for t in r["tools"]]),
                        ("requires_called", [t for k, v in policy.requires_called.items()
                                             for alt in ([k] if k != ALL_TOOLS else []) + v
                                             for t in alt.split("|")])):
        for t in listed:
            if t not in names:
                raise _err(f"the policy names tool '{t}' that the tools file does not define", policy.source or file,
                           fld)
    specs: list[WorkflowSpec] = []
    reply_slots: dict[str, SlotSpec] = {}
    for fn in fns:
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        leaves = flatten_schema(params, "", True, n_items, file, f"tool '{fn['name']}'")
        slots = {p: s for p, s, _ in leaves}
        required = [p for p, _, r in leaves if r]
        for p, s, _ in leaves:
            reply_slots.setdefault(index_free(p), SlotSpec(index_free(p), s.description, s.is_categorical,
                                                           list(s.possible_values), s.value_type))
        specs.append(ToolWorkflowSpec(
            id=f"{policy.service}:{fn['name']}", service=policy.service, intent=fn["name"],
            description=str(fn.get("description", "")), slots=slots, required=required,
            optional={}, is_transactional=fn["name"] in policy.consequential, source=file,
            tool=fn["name"], consequential=fn["name"] in policy.consequential, policy=policy, parameters=params))
    for g in policy.ask_order:
        for f in g:
            reply_slots.setdefault(f, SlotSpec(f, f.replace("_", " "), False, [], infer_value_type(f, False, [])))
    specs.append(ToolWorkflowSpec(
        id=f"{policy.service}:{REPLY_INTENT}", service=policy.service, intent=REPLY_INTENT,
        description="the agent's messages to the user", slots=reply_slots, required=[],
        optional={}, order=None, source=file, tool=REPLY_INTENT, policy=policy))
    return WorkflowRegistry(specs, source=file)


def load_tool_registry(tools_path: str | Path, policy_path: Optional[str | Path] = None,
                       max_items: Optional[int] = None) -> WorkflowRegistry:
    policy = read_policy(policy_path)
    return registry_from_tools(read_tools(tools_path), policy, file=str(tools_path), max_items=max_items)


def spec_to_dict(registry: WorkflowRegistry) -> dict[str, Any]:
    """Our workflows YAML (readable by ``load_workflow_spec``) plus the tools and policy to rebuild the tool specs."""
    tool_specs = [s for s in registry if isinstance(s, ToolWorkflowSpec)]
    if not tool_specs:
        raise SageInputError("no tool workflows to write")
    policy = tool_specs[0].policy
    workflows = []
    tools = []
    for s in tool_specs:
        workflows.append({
            "id": s.id, "description": s.description, "tool": s.tool,
            "transactional": bool(s.consequential),
            "slots": [{k: v for k, v in (("name", sl.name), ("description", sl.description or None),
                                         ("type", sl.value_type),
                                         ("possible_values", list(sl.possible_values) or None)) if v is not None}
                      for sl in s.slots.values()] or [{"name": "_none", "type": "text"}],
            "required": list(s.required)})
        if s.tool != REPLY_INTENT:
            tools.append({"type": "function", "function": {"name": s.tool, "description": s.description,
                                                             "parameters": s.parameters}})
    n_items = max((int(m.group(1)) + 1 for s in tool_specs for p in s.slots
                   for m in re.finditer(r"\[(\d+)\]", p)), default=policy.max_items)
    return {"kind": "tool_calls", "workflows": workflows,
            "tool_policy": {**policy.to_dict(), "max_items": max(n_items, 1)}, "tools": tools}


def write_tool_spec(registry: WorkflowRegistry, path: str | Path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(spec_to_dict(registry), fh, sort_keys=False, allow_unicode=True, width=120)


def is_tool_spec(raw: Any) -> bool:
    return isinstance(raw, dict) and raw.get("kind") == "tool_calls" and isinstance(raw.get("tools"), list)


def is_tool_spec_file(path: str | Path) -> bool:
    """Cheap sniff: a YAML/JSON file whose top level says ``kind: tool_calls``."""
    p = Path(path)
    if p.suffix not in (".yaml", ".yml", ".json") or not p.is_file():
        return False
    try:
        with open(p, encoding="utf-8") as fh:
            head = fh.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return bool(re.search(r'^\s*"?kind"?\s*:\s*"?tool_calls"?', head, re.M))


def load_tool_spec(path: str | Path) -> WorkflowRegistry:
    """A spec written by ``write_tool_spec`` (``kind: tool_calls``) -> the tool registry again."""
    p = str(path)
    try:
        with open(p, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh)
    except FileNotFoundError:
        raise _err("spec file not found", p) from None
    except yaml.YAMLError as e:
        raise _err(f"malformed YAML: {e}", p) from None
    if not is_tool_spec(raw):
        raise _err("not a tool-calling spec (kind: tool_calls with a 'tools' list)", p, "kind")
    policy = policy_from_dict(raw.get("tool_policy") or {}, p)
    return registry_from_tools(raw["tools"], policy, file=p)


def tool_specs(registry: Iterable[WorkflowSpec]) -> list[ToolWorkflowSpec]:
    return [s for s in registry if isinstance(s, ToolWorkflowSpec)]


__all__ = ["ToolPolicy", "ToolWorkflowSpec", "REPLY_INTENT", "flatten_schema", "read_tools", "read_policy",
           "policy_from_dict", "registry_from_tools", "load_tool_registry", "spec_to_dict", "write_tool_spec",
           "load_tool_spec", "is_tool_spec", "is_tool_spec_file", "index_free", "tool_specs"]
