"""tau-bench trajectory files: ``[{"task_id", "trial", "reward", "info", "traj"}, ...]``.

Each trajectory becomes a ``Conversation`` with id ``task<task_id>-trial<trial>``.
The reward, the gold action list and the simulated user's instruction are
reference data: they go into ``meta`` only (``meta["reference"]``), never into
any text an annotator sees.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sage_core.data.errors import SageInputError
from .conversation import Conversation, parse_conversation


def parse_tau_trajectories(raw: Any, name: str) -> list[Conversation]:
    if not isinstance(raw, list) or not raw:
        raise SageInputError("a tau-bench trajectory file must be a non-empty JSON list", file=name)
    convs: list[Conversation] = []
    seen: set[str] = set()
    for k, tr in enumerate(raw):
        if not isinstance(tr, dict) or "traj" not in tr:
            raise SageInputError(f"trajectory #{k} must be an object with 'traj'", file=name, field=f"[{k}].traj")
        cid = f"task{tr.get('task_id', k)}-trial{tr.get('trial', 0)}"
        if cid in seen:
            raise SageInputError(f"duplicate trajectory '{cid}'", file=name, field=f"[{k}]")
        seen.add(cid)
        info = tr.get("info") or {}
        task = info.get("task") or {}
        reference = {
            "reward": tr.get("reward"),
            "gold_actions": task.get("actions") or [],
            "instruction": task.get("instruction"),
            "task_user_id": task.get("user_id"),
        }
        meta = {"format": "tau-bench", "task_id": tr.get("task_id"), "trial": tr.get("trial"),
                "reference": reference}
        convs.append(parse_conversation(cid, tr["traj"], file=name, meta=meta))
    return convs


def read_tau_trajectories(path: str | Path) -> list[Conversation]:
    p = Path(path)
    try:
        with open(p, encoding="utf-8") as fh:
            raw = json.load(fh)
    except FileNotFoundError:
        raise SageInputError("trajectory file not found", file=str(p)) from None
    except json.JSONDecodeError as e:
        raise SageInputError(f"malformed JSON ({e.msg} at line {e.lineno} column {e.colno})",
                             file=str(p), line=e.lineno) from None
    return parse_tau_trajectories(raw, str(p))


def looks_like_tau_trajectories(raw: Any) -> bool:
    return (isinstance(raw, list) and bool(raw) and isinstance(raw[0], dict)
            and "traj" in raw[0] and "task_id" in raw[0])


__all__ = ["read_tau_trajectories", "parse_tau_trajectories", "looks_like_tau_trajectories"]
