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

Modules: ``context`` (the step's history), ``compile`` (criteria), ``verify`` (S1 / S2), ``margins``,
``user_requests``, ``records``, ``preferences``.
"""
from sage_core.evaluator.tools.compile import compile_tool_step
from sage_core.evaluator.tools.context import is_tool_step
from sage_core.evaluator.tools.verify import verify_tool_step_s1, verify_tool_step_s2

__all__ = ["compile_tool_step", "is_tool_step", "verify_tool_step_s1", "verify_tool_step_s2"]
