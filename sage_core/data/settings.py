"""Runtime settings, read from environment variables (prefix ``SAGE_``) or a ``.env`` file.

One place for model names, endpoints and paths so the CLI, the app and the
benchmarks agree on what ran.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_NLI_MODEL = "cross-encoder/nli-deberta-v3-base"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SAGE_", env_file=".env", extra="ignore")

    # S2
    s2_backend: str = "offline"  # "offline" (embedded default) | "nli"
    nli_model: str = DEFAULT_NLI_MODEL  # hub id or local directory
    nli_model_dir: Optional[str] = None  # local directory; overrides nli_model when set
    tau: float = 0.20
    extraction_floor: float = 0.5
    # S3 and LLM-judge baselines (any OpenAI-compatible endpoint)
    llm_base_url: str = "https://api.openai.com/v1"
    llm_api_key: Optional[str] = None
    llm_model: str = "gpt-4.1-mini"
    llm_strong_model: str = "gpt-4.1"
    llm_timeout_s: float = 60.0
    llm_price_file: Optional[str] = None  # JSON {"model": {"input": $/Mtok, "output": $/Mtok}}
    cache_dir: str = ".cache/sage"
    # audit database
    database_url: str = "sqlite:///sage_audit.db"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
