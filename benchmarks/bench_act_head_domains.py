"""How far the act head carries to whole domains it never saw: train and dev only, for choosing.

The act head (``science.heads.train``) is two one-hidden-layer MLPs on MiniLM embeddings of an agent reply, one on
the reply as written (raw), one on the reply with its numbers and capitalised name runs masked (``act_text``), with
their logits averaged (``act_logits``). Each is fitted with the committed recipe (hidden units, epochs, the L2
``--alpha``) on the replies of SGD train with its domains dealt into ``--folds`` folds (sorted by name, round robin):
for each fold, fitted on the other folds' domains, scoring the fold's replies. Beside it, the same recipe fitted on
all of train scores the dev replies (the in-distribution reference ``train-heads`` chooses on). Printed per view
(raw, masked, their mean): average precision per act (the ranking, whatever the threshold).

    HF_HUB_OFFLINE=1 python benchmarks/bench_act_head_domains.py [--data ../shared/data] [--folds 4]
        [--alpha 0.01] [--dev-replies 4000] [--embed-cache emb.npz]
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHOWN_ACTS = ("REQUEST", "CONFIRM", "NOTIFY_SUCCESS", "OFFER", "INFORM", "OFFER_INTENT", "REQ_MORE", "NOTIFY_FAILURE")
VIEWS = ("raw", "masked", "mean")


def deal_folds(domains: list[str], k: int) -> dict[str, int]:
    """Domains sorted by name, dealt round robin into ``k`` folds."""
    return {d: i % k for i, d in enumerate(sorted(set(domains)))}


def reply_rows(folder: Path, seed: int) -> list[tuple[str, str, frozenset]]:
    """(domain, reply, annotated act set) of each distinct annotated agent reply of one split, in a seeded order."""
    import sage_core.science.heads.train as T
    from sage_core.corpora.sgd.loader import service_domain
    turns, reg = T._load(folder)
    rows, seen = [], set()
    for t in turns:
        text = (t.agent or "").strip()
        if t.agent_acts is None or not text or text in seen:
            continue
        seen.add(text)
        rows.append((service_domain(reg.get(t.workflow).service), text, frozenset(a.act for a in t.agent_acts)))
    rows.sort(key=lambda r: (r[1], r[0], sorted(r[2])))
    random.Random(seed).shuffle(rows)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--alpha", type=float, default=1e-2, help="the act head's L2 (train-heads chose 0.01 on dev)")
    ap.add_argument("--dev-replies", type=int, default=4000)
    ap.add_argument("--embed-cache", default=None, help="an .npz of embeddings to reuse and extend")
    args = ap.parse_args(argv)

    import numpy as np
    from sklearn.metrics import average_precision_score
    from threadpoolctl import threadpool_limits
    import sage_core.science.heads.train as T
    from sage_core.evaluator.text.heads import act_logits, act_text, mlp_logits

    sgd = Path(args.data) / "sgd"
    if not (sgd / "train").is_dir() or not (sgd / "dev").is_dir():
        print(f"SGD train / dev not found under {sgd}; nothing to measure")
        return 0
    t0 = time.perf_counter()
    train, dev = reply_rows(sgd / "train", T.SEED), reply_rows(sgd / "dev", T.SEED + 1)[:args.dev_replies]
    embed = T.cached_embedder(Path(args.embed_cache)) if args.embed_cache else None
    if embed is None:
        from sage_core.evaluator.verify.s2_encoders import embed_float64 as embed
    emb = T._rounded(embed, sorted({f(r[1]) for r in train + dev for f in (str, act_text)}))
    X = {v: np.stack([emb[f(r[1])] for r in train]) for v, f in (("raw", str), ("masked", act_text))}
    Xd = {v: np.stack([emb[f(r[1])] for r in dev]) for v, f in (("raw", str), ("masked", act_text))}
    Y = np.asarray([[int(a in r[2]) for a in T.ACTS] for r in train])
    Yd = np.asarray([[int(a in r[2]) for a in T.ACTS] for r in dev])
    fold_of = deal_folds([r[0] for r in train], args.folds)
    F = np.asarray([fold_of[r[0]] for r in train])
    print(f"act head (alpha {args.alpha}), whole train domains held out in {args.folds} folds; {len(train)} train "
          f"replies, {len(dev)} dev replies; S2 encoder all-MiniLM-L6-v2 ({time.perf_counter() - t0:.0f} s)")

    def fit(rows) -> dict:
        return {v: T._mlp_params(T._mlp(X[v][rows], Y[rows], args.alpha, T.ACT_HIDDEN, T.ACT_ITERS))
                for v in ("raw", "masked")}

    def view_logits(params: dict, Xs: dict, rows) -> dict:
        return {"raw": mlp_logits(params["raw"], Xs["raw"][rows]),
                "masked": mlp_logits(params["masked"], Xs["masked"][rows]),
                "mean": act_logits((params["raw"], params["masked"]), Xs["raw"][rows], Xs["masked"][rows])}

    def aps(Z, Yt) -> dict[str, float]:
        return {a: float(average_precision_score(Yt[:, T.ACTS.index(a)], Z[:, T.ACTS.index(a)]))
                for a in SHOWN_ACTS if Yt[:, T.ACTS.index(a)].any()}
    held = {v: {a: [] for a in SHOWN_ACTS} for v in VIEWS}
    with threadpool_limits(limits=2):
        for k in range(args.folds):
            z = view_logits(fit(F != k), X, F == k)
            names = sorted(d for d, f in fold_of.items() if f == k)
            for v in VIEWS:
                fold_ap = aps(z[v], Y[F == k])
                for a, x in fold_ap.items():
                    held[v][a].append(x)
                print(f"fold {k} {names} held out ({int((F == k).sum())} replies), {v}: "
                      + ", ".join(f"{a} {x:.4f}" for a, x in fold_ap.items()), flush=True)
        ref = view_logits(fit(np.ones(len(train), dtype=bool)), Xd, np.ones(len(dev), dtype=bool))
    for v in VIEWS:
        print(f"{v:6s} mean AP, train domains held out: "
              + ", ".join(f"{a} {np.mean(x):.4f}" for a, x in held[v].items() if x))
    for v in VIEWS:
        print(f"{v:6s} AP on dev, fitted on all of train: "
              + ", ".join(f"{a} {x:.4f}" for a, x in aps(ref[v], Yd).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
