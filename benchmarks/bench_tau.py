"""SAGE-Core on tau-bench airline trajectories (gpt-4o), scored against the benchmark's own outcomes.

Prints (never asserts): dialogue-level P/R/F1 and AUROC against reward < 1,
agreement with the reward, decisive-step accuracy (exact and within one agent
step) against the step derived from the gold actions
(``sage_core.corpora.agent_logs.reference``), per-class counts, the trivial
baselines (all-fail; any consequential call), and the policy violations SAGE
finds in rewarded dialogues with the hand-checked sample in
``benchmarks/tau_hand_check.yaml`` and its checked precision.

Dialogue prediction: failure iff any step is labelled failure. Dialogue score
(for AUROC): noisy-OR over the failing steps, 1 - prod(1 - pi_i c_i), pi_i = 0.5 for
a step that can change the outcome record (a write that took effect, a dropped
request) and 0.25 for one that cannot (``sage_core.science.dialogue_score``, where
the choice is argued). AUROC is printed with a bootstrap interval, and apart for the
development half (tasks 0-11: where this round's rules and the prior were chosen)
and the other half. The earlier scores are printed for comparison.
Predicted decisive step: the first failing consequential call that took effect
(the tool did not answer with an error); else, for a dialogue predicted failed,
its last step (an omission).

    python benchmarks/bench_tau.py [--data ../shared/data/tau_bench/airline] [--s2 offline]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import yaml  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402


DEV_TASKS = range(0, 12)  # development half: this round's rules and the dialogue-score prior were chosen on it


def dialogue_scores(verdicts, effects, pi: float = 0.5) -> tuple[bool, float]:
    """(failed?, score): failed iff a step fails; score = noisy-OR over failing steps, steps that cannot change the
    outcome record (``effects``, from science.dialogue_score.outcome_effects) at the smaller prior."""
    from sage_core.science.dialogue_score import noisy_or_score
    return any(v.label.value == "failure" for v in verdicts), noisy_or_score(verdicts, pi, effects=effects)


def auroc_ci(y, s, n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """AUROC with a 95 % percentile bootstrap interval over dialogues (resamples with one class skipped)."""
    y, s = np.asarray(y), np.asarray(s, dtype=float)
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        i = rng.integers(0, len(y), len(y))
        if 0 < y[i].sum() < len(i):
            boots.append(roc_auc_score(y[i], s[i]))
    return roc_auc_score(y, s), float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))


def predicted_step(turns, verdicts, consequential) -> int | None:
    flagged = [(t, v) for t, v in zip(turns, verdicts) if v.label.value == "failure"]
    for t, v in flagged:
        st = t.meta["step"]
        if st["kind"] == "tool_call" and st.get("tool") in consequential and not st.get("is_error"):
            return st["index"]
    return turns[-1].meta["step"]["index"] if flagged else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "tau_bench" / "airline"))
    ap.add_argument("--policy", default=str(REPO / "data" / "specs" / "tau_bench_airline.yaml"))
    ap.add_argument("--s2", default="offline")
    ap.add_argument("--hand-check", default=str(REPO / "benchmarks" / "tau_hand_check.yaml"))
    ap.add_argument("--list-violations", type=int, default=0, help="print this many flagged turns of rewarded dialogues")
    a = ap.parse_args()

    from sage_core import CascadeConfig, Evaluator, prf
    from sage_core.corpora.agent_logs import load_agent_logs
    from sage_core.corpora.agent_logs.reference import by_dialogue, dialogue_reference

    data = Path(a.data)
    turns, registry = load_agent_logs("tau-bench", data / "trajectories_gpt-4o.json", data / "tools.json", a.policy)
    consequential = set(next(iter(registry)).policy.consequential)
    ev = Evaluator(registry, CascadeConfig(name="sage-core", s2_backend=a.s2))
    t0 = time.perf_counter()
    verdicts = ev.evaluate(turns)
    secs = time.perf_counter() - t0
    vmap = {v.turn_id: v for v in verdicts}
    dialogues = by_dialogue(turns)
    ids = sorted(dialogues, key=lambda d: (int(d.split("-")[0][4:]), int(d.split("trial")[1])))
    refs = {d: dialogue_reference(dialogues[d], consequential) for d in ids}
    y = np.array([int(refs[d].failed) for d in ids])
    from sage_core.science.dialogue_score import max_step_score, noisy_or_score
    pred, score, steps, n_failing, max_score, flat = [], [], {}, [], [], []
    pi_sens: dict[float, list[float]] = {0.0: [], 0.1: [], 0.5: []}
    from sage_core.science.dialogue_score import PI_NO_EFFECT, outcome_effects
    for d in ids:
        vs = [vmap[t.turn_id] for t in dialogues[d]]
        eff = outcome_effects(dialogues[d], vs, consequential)
        f, s = dialogue_scores(vs, eff)
        pred.append(int(f))
        score.append(s)
        n_failing.append(sum(v.label.value == "failure" for v in vs))
        max_score.append(max_step_score(vs))
        flat.append(noisy_or_score(vs))
        for p_ in pi_sens:
            pi_sens[p_].append(noisy_or_score(vs, effects=eff, pi_no_effect=p_))
        steps[d] = predicted_step(dialogues[d], vs, consequential)
    pred = np.array(pred)
    any_write = np.array([int(any(t.meta["step"].get("tool") in consequential for t in dialogues[d])) for d in ids])

    print(f"tau-bench airline, gpt-4o trajectories: {len(ids)} dialogues ({int(y.sum())} failed, reward < 1), "
          f"{len(turns)} agent steps ({sum(t.meta['step']['kind'] == 'tool_call' for t in turns)} tool calls); "
          f"config sage-core, S2 {ev.s2_backend_name}; {secs:.2f} s")
    print("\nDialogue level (failure iff reward < 1):")
    rows = [("SAGE-Core (noisy-OR score)", pred, np.array(score)),
            ("all-fail", np.ones_like(y), None), ("any consequential call", any_write, any_write.astype(float))]
    print(f"  {'predictor':32s} {'P':>6s} {'R':>6s} {'F1':>6s} {'agree':>6s} {'AUROC':>6s}")
    for name, p, s in rows:
        m = prf(y, p)
        auc = roc_auc_score(y, s) if s is not None and len(set(s)) > 1 else float("nan")
        print(f"  {name:32s} {m['precision']:6.3f} {m['recall']:6.3f} {m['f1']:6.3f} {np.mean(p == y):6.3f} {auc:6.3f}")
    auc, lo, hi = auroc_ci(y, score)
    print(f"  AUROC {auc:.3f}, 95 % bootstrap interval over dialogues [{lo:.3f}, {hi:.3f}]")
    print(f"  AUROC of other dialogue scores: earlier max over steps {roc_auc_score(y, max_score):.3f}; "
          f"noisy-OR with every failing step at pi=0.5 {roc_auc_score(y, flat):.3f}; steps without effect at "
          + ", ".join(f"{p_:g}: {roc_auc_score(y, v):.3f}" for p_, v in pi_sens.items())
          + f" (used: {PI_NO_EFFECT:g}); number of failing steps {roc_auc_score(y, n_failing):.3f}")
    task_of = np.array([int(d.split("-")[0][4:]) for d in ids])
    for name, mask in ((f"tasks {DEV_TASKS.start}-{DEV_TASKS.stop - 1} (development half)", np.isin(task_of, DEV_TASKS)),
                       (f"tasks {DEV_TASKS.stop}-{task_of.max()} (held out this round)", ~np.isin(task_of, DEV_TASKS))):
        if 0 < y[mask].sum() < mask.sum():
            m = prf(y[mask], pred[mask])
            auc, lo, hi = auroc_ci(y[mask], np.array(score)[mask])
            print(f"  {name}: {mask.sum()} dialogues ({int(y[mask].sum())} failed): P {m['precision']:.3f} "
                  f"R {m['recall']:.3f} AUROC {auc:.3f} [{lo:.3f}, {hi:.3f}]")

    print("\nDecisive step (failed dialogues, reference from gold actions):")
    kinds = Counter(r.kind for r in refs.values() if r.failed)
    exact = within = n = 0
    by_kind: dict[str, list[int]] = {}
    for d in ids:
        r = refs[d]
        if not r.failed:
            continue
        n += 1
        p = steps[d]
        ok_e = p is not None and p == r.decisive_step
        ok_w = p is not None and abs(p - r.decisive_step) <= 1
        exact += ok_e
        within += ok_w
        by_kind.setdefault(r.kind, [0, 0, 0])
        by_kind[r.kind][0] += 1
        by_kind[r.kind][1] += ok_e
        by_kind[r.kind][2] += ok_w
    print(f"  reference kinds: {dict(kinds)}")
    base_e = base_w = 0  # trivial baseline: the first consequential call that took effect, else the last step
    for d in ids:
        r = refs[d]
        if not r.failed:
            continue
        first = next((t.meta["step"]["index"] for t in dialogues[d] if t.meta["step"].get("tool") in consequential
                      and not t.meta["step"].get("is_error")), dialogues[d][-1].meta["step"]["index"])
        base_e += first == r.decisive_step
        base_w += abs(first - r.decisive_step) <= 1
    print(f"  SAGE-Core: exact {exact}/{n} = {exact / n:.3f}; within one agent step {within}/{n} = {within / n:.3f} "
          "(a failed dialogue SAGE does not flag has no predicted step and counts as a miss)")
    flagged_failed = [d for d in ids if refs[d].failed and steps[d] is not None]
    if flagged_failed:
        fe = sum(steps[d] == refs[d].decisive_step for d in flagged_failed)
        fw = sum(abs(steps[d] - refs[d].decisive_step) <= 1 for d in flagged_failed)
        print(f"  on the {len(flagged_failed)} failed dialogues SAGE flags: exact {fe / len(flagged_failed):.3f}, "
              f"within one {fw / len(flagged_failed):.3f}")
    print(f"  baseline (first effective consequential call, else the last step): exact {base_e / n:.3f}; "
          f"within one {base_w / n:.3f}")
    for k, (m, e, w) in sorted(by_kind.items()):
        print(f"    {k:16s} n={m:3d} exact {e / m:.3f} within-one {w / m:.3f}")

    print("\nPer-class counts (steps with the class fired), failed / rewarded dialogues:")
    cls = Counter()
    for t in turns:
        v = vmap[t.turn_id]
        for c in v.fired_classes:
            cls[(c, refs[t.dialogue_id].failed)] += 1
    labels = Counter((vmap[t.turn_id].label.value, refs[t.dialogue_id].failed) for t in turns)
    for c in ("IUV", "WNF", "PC", "UV"):
        print(f"  {c:4s} {cls[(c, True)]:4d} / {cls[(c, False)]:4d}")
    print("  step labels failed dlg: " + ", ".join(f"{k} {labels[(k, True)]}" for k in ("failure", "acceptable", "undecided"))
          + "; rewarded dlg: " + ", ".join(f"{k} {labels[(k, False)]}" for k in ("failure", "acceptable", "undecided")))
    stages = Counter(tr.final.stage.value for v in verdicts for tr in v.traces)
    print("  deciding stage of criteria: " + ", ".join(f"{k} {n}" for k, n in sorted(stages.items())))

    print("\nPolicy violations in rewarded dialogues (the reward checks only the final database state):")
    flagged = [(t, vmap[t.turn_id]) for d in ids if not refs[d].failed for t in dialogues[d]
               if vmap[t.turn_id].label.value == "failure"]
    print(f"  {len(flagged)} flagged steps in {len({t.dialogue_id for t, _ in flagged})} of "
          f"{int((1 - y).sum())} rewarded dialogues; by class: "
          + ", ".join(f"{k} {n}" for k, n in sorted(Counter(c for _, v in flagged for c in v.fired_classes).items())))
    hc = Path(a.hand_check)
    if hc.is_file():
        checked = yaml.safe_load(hc.read_text(encoding="utf-8")) or []
        now = {t.turn_id: v for t, v in flagged}
        rel = [c for c in checked if c["turn_id"] in now]
        ok = sum(1 for c in rel if c["verdict"] == "violation")
        print(f"  hand-checked sample: {len(rel)} of them still flagged ({len(checked)} in the file); "
              f"checked precision {ok}/{len(rel)} = {ok / max(1, len(rel)):.3f}")
        for c in rel:
            print(f"   - {c['turn_id']} [{c['class']}] {c['verdict']}: {c['why']}")
    for t, v in flagged[:a.list_violations]:
        fired = [tr for tr in v.traces if tr.final.decision.value == "true"]
        print(f"\n  {t.turn_id} {t.workflow}: " + "; ".join(f"{tr.criterion.type.value} {tr.final.stage.value} "
                                                           f"{tr.final.rationale}" for tr in fired))
        print(f"    user: {t.user[:200]!r}")
        print(f"    agent: {t.agent[:300]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
