"""Training of the evaluator's learned heads (``train``); inference lives in ``sage_core.evaluator.text.heads``."""
