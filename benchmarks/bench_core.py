"""Speed of SAGE-Core (compiler + S1 + offline S2) on ~280 real SGD turns.

Prints ms/turn warm and whole-slice seconds (target < 2 s on a 2-core CPU).
Figures only: timings are never asserted in tests.
Run: ``HF_HUB_OFFLINE=1 python benchmarks/bench_core.py [--n 280]``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sage_core import (
    AgentAct,
    Turn,
    UserValue,
    Utterance,
    WorkflowRegistry,
    load_schema,
)

SGD_TEST = REPO.parent / "shared" / "data" / "sgd" / "test"
PSEUDO_SLOTS = {"intent", "count", ""}


def quick_sgd_turns(folder: Path, registry: WorkflowRegistry, limit: int | None = None) -> list[Turn]:
    """Minimal SGD reader (fallback while the loaders module is absent): one Turn per system turn."""
    turns: list[Turn] = []
    for path in sorted(Path(folder).glob("dialogues_*.json")):
        for dlg in json.loads(path.read_text()):
            last_state: dict[str, dict[str, str]] = {}
            utts = dlg["turns"]
            for i in range(1, len(utts), 2):
                usr, sysu = utts[i - 1], utts[i]
                frames = {f["service"]: f for f in usr["frames"]}
                svc = sysu["frames"][0]["service"]
                uf = frames.get(svc)
                before = dict(last_state.get(svc, {}))
                for s, f in frames.items():
                    last_state[s] = {k: v[0] for k, v in f["state"]["slot_values"].items()}
                if uf is None or uf["state"]["active_intent"] == "NONE":
                    continue
                wid = f"{svc}:{uf['state']['active_intent']}"
                if wid not in registry:
                    continue
                after = last_state[svc]
                spans = {s["slot"]: (s["start"], s["exclusive_end"]) for s in uf.get("slots", [])}
                spec = registry.get(wid)
                uvs = [UserValue(a["slot"], a["values"][0], spans.get(a["slot"]))
                       for a in uf["actions"] if a["act"] == "INFORM" and a["values"] and spec.has_slot(a["slot"])]
                acts = [AgentAct(a["act"], a["slot"] if spec.has_slot(a["slot"]) else None,
                                 a["values"][0] if a["values"] else None) for a in sysu["frames"][0]["actions"]]
                hist = [Utterance("user" if u["speaker"] == "USER" else "agent", u["utterance"]) for u in utts[:i - 1]]
                turns.append(Turn(f"{dlg['dialogue_id']}:{i}", dlg["dialogue_id"], wid, hist, usr["utterance"],
                                  sysu["utterance"], before, after, uvs, acts))
                if limit and len(turns) >= limit:
                    return turns
    return turns


def load_turns(n: int, injection: str = "natural"):
    """~n SGD turns: the injected 280-turn slice when the science modules exist, else clean loader turns."""
    registry = load_schema(SGD_TEST / "schema.json")
    try:
        from sage_core import build_slice
        from sage_core import load_turns as corpus_turns
        turns, registry = corpus_turns("sgd", str(SGD_TEST), str(SGD_TEST / "schema.json"))
        turns, _ = build_slice(turns, registry, n=n, rate=0.5, seed=0, injection=injection)
        return turns, registry, f"slice_builder (50% injected, seed 0, {injection} injection)"
    except ImportError:
        pass
    try:
        from sage_core import load_sgd_dialogues
        paths = sorted(SGD_TEST.glob("dialogues_*.json"))[:2]
        return list(load_sgd_dialogues(paths, registry))[:n], registry, "sage_core.corpora.sgd.loader (clean)"
    except ImportError:
        return quick_sgd_turns(SGD_TEST, registry, limit=n), registry, "bench_core.quick_sgd_turns (clean)"


def timed(registry, turns, runs: int = 2) -> tuple[list[float], list]:
    from sage_core import CascadeConfig, Evaluator
    times, vs = [], []
    for _ in range(runs):
        ev = Evaluator(registry, CascadeConfig.named("sage-core", s2_backend="offline"))
        t0 = time.perf_counter()
        vs = ev.evaluate(turns)
        times.append(time.perf_counter() - t0)
    return times, vs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=280)
    ap.add_argument("--injection", default="natural", choices=["natural", "template"])
    args = ap.parse_args()
    import copy

    from sage_core import classification_metrics
    from sage_core.evaluator.verify.s2_encoders import embed
    turns, registry, source = load_turns(args.n, args.injection)
    t0 = time.perf_counter()
    embed(["warm up"])  # MiniLM loads once per process
    load_s = time.perf_counter() - t0
    raw = copy.deepcopy(turns)
    for t in raw:  # the same turns as a text-only agent log: no acts, no user-value annotation
        t.user_values, t.agent_acts = None, None
    for name, ts in (("annotated", turns), ("text-only", raw)):
        times, vs = timed(registry, ts)
        out = {"variant": name, "turns": len(ts), "source": source, "s2_backend": vs[0].s2_backend if vs else "",
               "model_load_s": round(load_s, 2), "whole_slice_s": [round(x, 3) for x in times],
               "ms_per_turn_warm": round(1000 * times[-1] / max(len(ts), 1), 2), "target_s": 2.0,
               "pass": times[-1] < 2.0}
        if any(t.gold for t in ts):
            m = classification_metrics(vs, ts)
            out.update({k: m[k] for k in ("f1", "precision", "recall", "per_class_recall", "stage_shares")})
        print(json.dumps(out))


if __name__ == "__main__":
    main()
