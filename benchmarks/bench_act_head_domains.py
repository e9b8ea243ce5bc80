"""How far the act head carries to whole domains it never saw: train and dev only, for choosing.

The act head (``science.heads.train``: a one-hidden-layer MLP on the MiniLM embedding of an agent reply, one
logistic output per act) is fitted with the committed recipe (hidden units, epochs, the L2 ``--alpha``) on the
replies of SGD train, with its domains dealt into ``--folds`` folds (sorted by name, round robin): for each fold it
is fitted on the other folds' domains and scores the fold's replies. Beside it, the same recipe fitted on all of
train scores the dev replies (the in-distribution reference that ``train-heads`` chooses on). Printed: average
precision per act (the ranking, whatever the threshold). ``--mask-values``: the variant tried on 2026-12-07 (not
in the library; docs/benchmarks.md): every number and capitalised name run of a reply replaced by one placeholder
before it is embedded, so that the head cannot learn a domain's values as evidence of an act.

    HF_HUB_OFFLINE=1 python benchmarks/bench_act_head_domains.py [--data ../shared/data] [--folds 4]
        [--alpha 0.01] [--dev-replies 4000] [--embed-cache emb.npz] [--mask-values]
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHOWN_ACTS = ("REQUEST", "CONFIRM", "NOTIFY_SUCCESS", "OFFER", "INFORM", "OFFER_INTENT", "REQ_MORE", "NOTIFY_FAILURE")
_NUMBER = re.compile(r"\$?\d(?:[\d,.:]*\d)?")
_CAPITALISED_RUN = re.compile(r"\b[A-Z][\w'&-]*(?:\s+(?:of|the|and|de|&)?\s*[A-Z][\w'&-]*)*")


def mask_values(text: str) -> str:
    """``--mask-values``: numbers -> "5", capitalised name runs -> "Smith"; a sentence's capitalised first word and
    the pronoun "I" stay (they are no values)."""
    text = _NUMBER.sub("5", text)

    def run(m: re.Match) -> str:
        before = text[:m.start()].rstrip()
        if not before or before[-1] in ".!?":
            first, _, rest = m.group(0).partition(" ")
            return f"{first} Smith" if rest.strip() else first
        return m.group(0) if re.fullmatch(r"I(?:'[a-z]+)?", m.group(0)) else "Smith"
    return _CAPITALISED_RUN.sub(run, text)


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
    ap.add_argument("--mask-values", action="store_true", help="the variant: values masked before embedding")
    args = ap.parse_args(argv)

    import numpy as np
    from sklearn.metrics import average_precision_score
    from threadpoolctl import threadpool_limits
    import sage_core.science.heads.train as T
    from sage_core.evaluator.text.heads import mlp_logits

    sgd = Path(args.data) / "sgd"
    if not (sgd / "train").is_dir() or not (sgd / "dev").is_dir():
        print(f"SGD train / dev not found under {sgd}; nothing to measure")
        return 0
    t0 = time.perf_counter()
    train, dev = reply_rows(sgd / "train", T.SEED), reply_rows(sgd / "dev", T.SEED + 1)[:args.dev_replies]
    view = mask_values if args.mask_values else (lambda s: s)
    embed = T.cached_embedder(Path(args.embed_cache)) if args.embed_cache else None
    if embed is None:
        from sage_core.evaluator.verify.s2_encoders import embed_float64 as embed
    emb = T._rounded(embed, sorted({view(r[1]) for r in train + dev}))
    X = np.stack([emb[view(r[1])] for r in train])
    Y = np.asarray([[int(a in r[2]) for a in T.ACTS] for r in train])
    Xd = np.stack([emb[view(r[1])] for r in dev])
    Yd = np.asarray([[int(a in r[2]) for a in T.ACTS] for r in dev])
    fold_of = deal_folds([r[0] for r in train], args.folds)
    F = np.asarray([fold_of[r[0]] for r in train])
    print(f"act head ({'values masked' if args.mask_values else 'raw replies'}, alpha {args.alpha}), whole train "
          f"domains held out in {args.folds} folds; {len(train)} train replies, {len(dev)} dev replies; S2 encoder "
          f"all-MiniLM-L6-v2 ({time.perf_counter() - t0:.0f} s)")

    def aps(Z, Yt) -> dict[str, float]:
        return {a: float(average_precision_score(Yt[:, T.ACTS.index(a)], Z[:, T.ACTS.index(a)]))
                for a in SHOWN_ACTS if Yt[:, T.ACTS.index(a)].any()}
    held: dict[str, list[float]] = {a: [] for a in SHOWN_ACTS}
    with threadpool_limits(limits=2):
        for k in range(args.folds):
            params = T._mlp_params(T._mlp(X[F != k], Y[F != k], args.alpha, T.ACT_HIDDEN, T.ACT_ITERS))
            fold_ap = aps(mlp_logits(params, X[F == k]), Y[F == k])
            for a, v in fold_ap.items():
                held[a].append(v)
            names = sorted(d for d, f in fold_of.items() if f == k)
            print(f"fold {k} {names} held out ({int((F == k).sum())} replies): "
                  + ", ".join(f"{a} {v:.4f}" for a, v in fold_ap.items()), flush=True)
        params = T._mlp_params(T._mlp(X, Y, args.alpha, T.ACT_HIDDEN, T.ACT_ITERS))
        ref = aps(mlp_logits(params, Xd), Yd)
    print("mean AP, train domains held out: " + ", ".join(f"{a} {np.mean(v):.4f}" for a, v in held.items() if v))
    print("AP on dev, fitted on all of train: " + ", ".join(f"{a} {v:.4f}" for a, v in ref.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
