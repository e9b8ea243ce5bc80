"""The OpenAI-compatible LLM client and the LLM-judge baselines."""
