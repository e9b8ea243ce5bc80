"""How far the slot head carries to whole domains it never saw: train and dev only, for choosing.

SGD test has services of domains that neither train nor dev has, and dev has few of them, so dev scores a new
recipe mostly on new services of known domains (a third hotel service beside two in train). This benchmark
imitates test's harder case on the splits that may be used for choosing: the domains that have services in both
train and dev are dealt into ``--folds`` folds (sorted by name, round robin); for each fold the slot head is fitted
twice with the committed recipe (``science.heads.train.fit_slot_head``) -- on every train service, and on the
train services of the *other* domains only -- and both fits score the same dev replies of the fold's domains.
``--heads``: the committed pair (the plain and the centred head, their calibrated probabilities averaged;
``mean_dev_scores``), or either head alone; each head with both of its listwise stages (the token-level one on
token rows of the float64 encoder, not cached).

Printed per fold and as the mean over folds: the average precision of requested (reply, slot) pairs and the recall
at the threshold reaching precision 0.93 on those same pairs (an oracle threshold: the gap between the two fits is
the figure, not the level). The act head's REQUEST logit, one of the listwise features, comes from the committed
``heads.json`` (fitted on every train domain). Prints figures only.

    HF_HUB_OFFLINE=1 python benchmarks/bench_slot_head_domains.py [--data ../shared/data] [--folds 2]
        [--requests 5000] [--embed-cache emb.npz] [--heads both|plain|centred]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PRECISION = 0.93


def recall_at_precision(p, y, precision: float) -> float:
    """The most recall of any threshold on ``p`` whose predictions reach ``precision``."""
    import numpy as np
    order = np.argsort(-p, kind="stable")
    ys = y[order]
    tp = np.cumsum(ys)
    prec = tp / np.arange(1, len(ys) + 1)
    ok = np.nonzero(prec >= precision)[0]
    return float(tp[ok[-1]] / max(ys.sum(), 1)) if len(ok) else 0.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--folds", type=int, default=2)
    ap.add_argument("--requests", type=int, default=5000, help="train request replies per fit (the recipe: 7000)")
    ap.add_argument("--embed-cache", default=None, help="an .npz of embeddings to reuse and extend")
    ap.add_argument("--heads", choices=["both", "plain", "centred"], default="both",
                    help="the slot heads fitted and averaged (both: as train-heads; plain / centred: one alone)")
    args = ap.parse_args(argv)

    import numpy as np
    from sklearn.metrics import average_precision_score
    from threadpoolctl import threadpool_limits
    from sage_core.corpora.sgd.loader import service_domain as domain, services_with_dialogues
    from sage_core.evaluator.text.heads import (centred_pair_features, load_heads, pair_features, request_slots,
                                               request_units)
    import sage_core.science.heads.train as T
    from sage_core.evaluator.verify.s2_encoders import tokens_float64

    sgd = Path(args.data) / "sgd"
    t0 = time.perf_counter()
    train_services, dev_services = services_with_dialogues(sgd / "train"), services_with_dialogues(sgd / "dev")
    if not train_services or not dev_services:
        print(f"SGD train / dev dialogues not found under {sgd}; nothing to measure")
        return 0
    shared = sorted({domain(s) for s in train_services} & {domain(s) for s in dev_services})
    folds = [set(shared[i::args.folds]) for i in range(args.folds)]
    features = {"both": [pair_features, centred_pair_features], "plain": [pair_features],
                "centred": [centred_pair_features]}[args.heads]
    heads = load_heads()
    req_j = heads.acts.index("REQUEST")
    embed = T.cached_embedder(Path(args.embed_cache)) if args.embed_cache else None
    if embed is None:
        from sage_core.evaluator.verify.s2_encoders import embed_float64 as embed
    print(f"slot head ({args.heads}), whole domains held out: train fits, dev scores (S2 encoder all-MiniLM-L6-v2); "
          f"{len(shared)} domains with train and dev services in {args.folds} folds; {args.requests} train requests "
          f"per fit; recall at precision {PRECISION} with an oracle threshold")
    scores: dict[str, list[tuple[float, float]]] = {"all train domains": [], "fold's domains held out": []}
    with threadpool_limits(limits=2):
        for k, held in enumerate(folds):
            dev = T.collect(sgd / "dev", 0, 1000, T.SEED + 1, units=request_units, slots_of=request_slots,
                            services={s for s in dev_services if domain(s) in held})
            fits = {"all train domains": train_services,
                    "fold's domains held out": {s for s in train_services if domain(s) not in held}}
            for name, services in fits.items():
                train = T.collect(sgd / "train", 0, args.requests, T.SEED, services=services)
                emb = T._rounded(embed, sorted(set(T._strings(train)) | set(T._strings(dev))))
                tok = T._rounded(tokens_float64, sorted(set(T.token_strings(train)) | set(T.token_strings(dev))))
                fitted = [T.fit_slot_head(train, dev, emb, (heads.act_mlp, heads.act_mlp_masked), req_j,
                                            features=f, tok=tok) for f in features]
                p, y = T.mean_dev_scores(dev, *fitted)
                ap_ = average_precision_score(y, p)
                r = recall_at_precision(p, y, PRECISION)
                scores[name].append((ap_, r))
                print(f"fold {k} {sorted(held)}: fitted on {name} ({len(services)} services, {fitted[0].n_pairs} "
                      f"pairs): AP {ap_:.4f}, R@P{PRECISION} {r:.3f} "
                      f"on {int(y.sum())} requested dev pairs ({time.perf_counter() - t0:.0f} s)", flush=True)
    for name, rows in scores.items():
        a = np.asarray(rows)
        print(f"mean over folds, fitted on {name}: AP {a[:, 0].mean():.4f}, R@P{PRECISION} {a[:, 1].mean():.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
