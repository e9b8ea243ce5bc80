"""Real MultiWOZ agent outputs (PPTOD, UBAR, SOLOIST) as natural-failure slices."""
