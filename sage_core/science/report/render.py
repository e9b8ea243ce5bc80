"""The report as Markdown: tables from a computed ``ReportData``; no computation here."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from sage_core.data.types import ROUTING_STAGES
from sage_core.science.report.compute import CLASSES, COVERAGES, ReportData


def _f(x: Optional[float], nd: int = 3) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def _ci(t: tuple[float, float, float]) -> str:
    return f"{t[0]:.3f} [{t[1]:.3f}, {t[2]:.3f}]"


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# --- Markdown ------------------------------------------------------------------------
def render(data: ReportData, sage_name: str, baseline_names: Sequence[str], slice_name: str = "") -> str:
    L = [f"# SAGE evaluation report{(' — ' + slice_name) if slice_name else ''}", "",
         f"{data.n} turns; F1 of the failure class with 95 % percentile bootstrap CIs; "
         f"undecided verdicts score as acceptable at full coverage.", ""]
    if data.s2_backend:
        L += [f"S2 backend that ran: **{data.s2_backend}**", ""]
    ev = data.evaluators
    pw = data.pairwise
    L += ["## Table 1: evaluator comparison", ""]
    rows = []
    for k in [sage_name] + [b for b in ev if b != sage_name]:
        e = ev[k]
        d = pw.get(k)
        rows.append([k, _ci((e["f1"], e["f1_lo"], e["f1_hi"])), _f(e["precision"]), _f(e["recall"]),
                     *[_f(e["per_class_recall"][c], 2) for c in CLASSES],
                     f"{d['delta']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]" if d else "—",
                     _p(d["p"]) if d else "—", _p(d["p_holm"]) if d else "—"])
    L += [_table(["evaluator", "F1 [95% CI]", "P", "R", *[f"R_{c}" for c in CLASSES],
                  f"ΔF1 ({sage_name} − row)", "p", "p (Holm)"], rows), ""]
    if data.paired:
        pr = data.paired
        shares = ", ".join(f"{k} {v:.0%}" for k, v in pr["selection_shares"].items())
        L += [f"**{sage_name} vs the strongest baseline** (re-selected inside each of {pr['n_resamples']} "
              f"resamples): ΔF1 = {pr['delta']:+.3f} [{pr['lo']:+.3f}, {pr['hi']:+.3f}], two-sided p = "
              f"{_p(pr['p'])}; strongest on the full slice: {pr['best_baseline']}; selected as strongest in: "
              f"{shares}.", ""]
    else:
        L += ["No baseline verdict files were given (--baselines), so there is no paired test.", ""]
    if data.annotations_stripped:
        L += ["Annotations stripped (--strip-annotations): every SAGE run saw the text and the states only, "
              "and the compiler extracted user values and agent acts itself (the text-only setting).", ""]
    elif data.text_only:
        L += _render_text_only(data, sage_name)
    if data.ablation:
        L += ["## Per-tier ablation", ""]
        rows = [[a["row"], a["config"], _ci((a["f1"], a["f1_lo"], a["f1_hi"])), _f(a["precision"]),
                 _f(a["recall"]), _f(a["undecided_rate"]),
                 "—" if a.get("delta") is None else f"{a['delta']:+.3f}",
                 "—" if a.get("delta") is None else f"{_p(a['p'])} / {_p(a['p_holm'])}", a.get("note", "")]
                for a in data.ablation]
        L += [_table(["tier", "config", "F1 [95% CI]", "P", "R", "undecided", "ΔF1 vs full", "p / p (Holm)",
                      "note"], rows), ""]
    if data.routing:
        L += ["## Routing anatomy", "", "Share of criteria whose final verdict came from each stage "
              "('none' = every stage abstained).", ""]
        rows = [[k, r["criteria"], _f(r["criteria_per_turn"], 2), *[f"{r['shares'][s]:.1%}" for s in
                                                                     ROUTING_STAGES],
                 _f(r["paid_calls_per_turn"], 3)] for k, r in data.routing.items()]
        L += [_table(["config", "criteria", "criteria/turn", *ROUTING_STAGES[:-1], "undecided", "paid calls/turn"],
                     rows), ""]
    L += ["## Selective evaluation", "", "Turns sorted by confidence (descending, ties in slice order); "
          "F1 on the kept share. Evaluators without confidence are left out. ECE: expected calibration error "
          "of turn confidence (10 equal-width bins; a verdict is correct when its prediction at full coverage "
          "equals gold).", ""]
    rows = [[k, *[_f(s["f1_at"][str(int(c * 100))]) for c in COVERAGES], _f(s["aurc"]), _f(s.get("ece")),
             _f(s["undecided_rate"])] for k, s in data.selective.items()]
    L += [_table(["evaluator", "F1@100%", "F1@90%", "F1@80%", "AURC", "ECE", "undecided"], rows) if rows
          else "No evaluator reported confidence.", ""]
    L += ["## Cost and latency", ""]
    rows = [[k, "—" if e["cost_per_1k"] is None else f"${e['cost_per_1k']:.4f}",
             _f(e["p50_latency_ms"], 1), _f(e["paid_calls_per_turn"], 3)] for k, e in ev.items()]
    L += [_table(["evaluator", "cost / 1k turns (USD)", "p50 latency (ms/turn)", "paid calls/turn"], rows), ""]
    if data.sgdx:
        s = data.sgdx
        L += ["## SGD-X robustness", "", f"{sage_name} re-run with the slice remapped to each variant schema "
              "(utterances unchanged).", ""]
        st = s.get("text_only")
        if st:
            L += [_table(["variant", "F1 (annotated)", "F1 (text-only)"],
                         [[v, _f(f), _f(st["f1"].get(v))] for v, f in s["f1"].items()]), ""]
        else:
            L += [_table(["variant", "F1"], [[v, _f(f)] for v, f in s["f1"].items()]), ""]
        L += [f"Mean F1 {_f(s['mean_f1'])}, σ {_f(s['sigma_f1'])} (population, over {len(s['f1'])} variants); "
              f"verdict invariant across all variants for {s['invariant_share']:.1%} of turns.", ""]
        if st:
            L += [f"Text-only (annotations stripped, so the compiler extracts evidence against the renamed "
                  f"slots and descriptions): mean F1 {_f(st['mean_f1'])}, σ {_f(st['sigma_f1'])}; verdict "
                  f"invariant across all variants for {st['invariant_share']:.1%} of turns.", ""]
    if data.notes:
        L += ["## Notes", ""] + [f"- {n}" for n in data.notes] + [""]
    return "\n".join(L)


def _render_text_only(data: ReportData, sage_name: str) -> list[str]:
    to = data.text_only
    ev, e = data.evaluators, to["stats"]
    L = ["## Table 1b: text-only setting (annotations stripped)", "",
         f"Table 1 scores {sage_name} with the slice's annotated `user_values` / `agent_acts`. On an injected "
         "slice the injectors and the evaluator follow the same written contract, so that row is a consistency "
         f"check. Here {sage_name} is re-run on the same turns without those annotations: the compiler extracts "
         "user values and agent acts from the text (a real extraction measurement). Baseline verdicts are the "
         "same as in Table 1.", ""]
    a = ev[sage_name]
    va = to["vs_annotated"]
    pw = to["pairwise"]
    rows = [[to["name"], _ci((e["f1"], e["f1_lo"], e["f1_hi"])), _f(e["precision"]), _f(e["recall"]),
             *[_f(e["per_class_recall"][c], 2) for c in CLASSES], "—", "—", "—"],
            [f"{sage_name} (annotated)", _ci((a["f1"], a["f1_lo"], a["f1_hi"])), _f(a["precision"]),
             _f(a["recall"]), *[_f(a["per_class_recall"][c], 2) for c in CLASSES],
             f"{va['delta']:+.3f} [{va['lo']:+.3f}, {va['hi']:+.3f}]", _p(va["p"]), "n/a"]]
    for k in pw:
        b, d = ev[k], pw[k]
        rows.append([k, _ci((b["f1"], b["f1_lo"], b["f1_hi"])), _f(b["precision"]), _f(b["recall"]),
                     *[_f(b["per_class_recall"][c], 2) for c in CLASSES],
                     f"{d['delta']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]", _p(d["p"]), _p(d["p_holm"])])
    L += [_table(["evaluator", "F1 [95% CI]", "P", "R", *[f"R_{c}" for c in CLASSES],
                  f"ΔF1 ({to['name']} − row)", "p", "p (Holm)"], rows), ""]
    r = to["routing"]
    line = (f"{to['changed_verdicts']} of {data.n} turn verdicts differ from the annotated run; text-only routing: "
            f"{r['criteria']} criteria ({r['criteria_per_turn']:.2f}/turn), "
            + ", ".join(f"{s} {r['shares'][s]:.1%}" for s in ROUTING_STAGES)
            + f"; undecided turns {e['undecided_rate']:.1%}.")
    sel = to.get("selective")
    if sel:
        line += " F1@" + ", F1@".join(f"{c}% {_f(v)}" for c, v in sel["f1_at"].items()) + "."
        if sel.get("ece") is not None:
            line += f" Turn-confidence ECE {_f(sel['ece'])}."
    L += [line + " Holm adjusts over the baselines (as in Table 1); the annotated comparison is outside that family.",
          ""]
    if to["paired"]:
        pr = to["paired"]
        L += [f"**{to['name']} vs the strongest baseline** (re-selected inside each resample): "
              f"ΔF1 = {pr['delta']:+.3f} [{pr['lo']:+.3f}, {pr['hi']:+.3f}], two-sided p = {_p(pr['p'])}; "
              f"strongest on the full slice: {pr['best_baseline']}.", ""]
    return L
