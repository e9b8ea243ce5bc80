"""The verifier stages: S1 symbolic rules, S2 (symbolic and encoder/NLI), S3 focused LLM call."""
