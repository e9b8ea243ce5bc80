"""The S2 margins of tool steps: hand-set constants on the margin scale, named so reports can say so."""
from __future__ import annotations

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
