"""``python -m sage_core report``: run the SAGE configs, read baselines, write Markdown, JSON, plots."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict
from pathlib import Path

from sage_core.data.errors import ModelUnavailableError, SageInputError
from sage_core.data.verdict_io import (
    EvaluatorVerdicts,
    from_turn_verdicts,
    read_evaluator_verdicts,
)
from sage_core.science.report.compute import (
    SAGE_CONFIGS,
    TEXT_ONLY_SUFFIX,
    ReportData,
    build_report,
    gold_vector,
    has_annotations,
    run_sage,
    sgdx_variants,
    strip_annotations,
)
from sage_core.science.report.plots import plot_pareto, plot_reliabilities, plot_risk_coverage
from sage_core.science.report.render import render


def write_outputs(data: ReportData, markdown: str, turns, evs: dict[str, EvaluatorVerdicts],
                  out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    pareto = plot_pareto(data, out_dir / "pareto.png")
    rc = plot_risk_coverage(turns, evs, out_dir / "risk_coverage.png")
    plots = [p for p in (pareto, rc) if p]
    plots += plot_reliabilities(data, out_dir)
    if plots:
        markdown += "\n## Plots\n\n" + "\n".join(f"![{p.stem}]({p.name})" for p in plots) + "\n"
    (out_dir / "report.md").write_text(markdown, encoding="utf-8")
    (out_dir / "report.json").write_text(json.dumps(asdict(data), indent=1, default=str), encoding="utf-8")
    written += [out_dir / "report.md", out_dir / "report.json"] + plots
    return written


def add_arguments(p) -> None:
    p.add_argument("--slice", required=True, help="labelled slice JSONL (gold on every turn)")
    p.add_argument("--schema", required=True, help="schema.json or workflow spec the slice uses")
    p.add_argument("--baselines", nargs="*", default=[], help="evaluator verdict files (JSONL/CSV)")
    p.add_argument("--configs", default="sage-core,no_s1,no_s2",
                   help="SAGE configs to run (sage-core first; sage-llm is added when an LLM endpoint is set)")
    p.add_argument("--s2-backend", default=None, help="offline | nli (default: SAGE_S2_BACKEND)")
    p.add_argument("--sgdx-dir", default=None, help="folder with SGD-X v1..v5/schema.json")
    p.add_argument("--n-resamples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cluster-by-dialogue", action="store_true", help="bootstrap whole dialogues")
    p.add_argument("--strip-annotations", action="store_true",
                   help="drop user_values/agent_acts from every turn: the whole report is text-only")
    p.add_argument("--no-text-only", action="store_true",
                   help="skip Table 1b (the primary config re-run without annotations)")
    p.add_argument("--out-dir", default=None, help="write report.md, report.json, PNG plots and SAGE verdicts here")


def run(args) -> int:
    from sage_core.corpora.schemas import load_schema
    from sage_core.data.settings import get_settings
    from sage_core.data.slice_io import read_slice, validate_against

    from sage_core.data.limits import check_input_file, check_output_dir

    if args.n_resamples < 1:
        raise SageInputError(f"--n-resamples must be at least 1, got {args.n_resamples}", field="n-resamples")
    check_input_file(args.schema, "schema", field="schema")
    check_input_file(args.slice, "slice", field="slice")
    for b in args.baselines:
        check_input_file(b, "baseline verdict", field="baselines")
    if args.out_dir:
        check_output_dir(args.out_dir, "report folder", field="out-dir")
    settings = get_settings()
    backend = args.s2_backend or settings.s2_backend
    try:  # accepts ABCD ontologies too (ABCD-UV slices)
        from sage_core.corpora import load_registry_for_slice
        registry = load_registry_for_slice(args.schema)
    except ImportError:
        registry = load_schema(args.schema)
    turns = read_slice(args.slice)
    validate_against(turns, registry, args.slice)
    gold_vector(turns)
    strip = bool(getattr(args, "strip_annotations", False))
    annotated = has_annotations(turns)
    if strip:
        turns = strip_annotations(turns)
    want_text_only = annotated and not strip and not getattr(args, "no_text_only", False)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in configs if c not in SAGE_CONFIGS]
    if unknown or not configs:
        raise SageInputError(f"unknown config(s) {', '.join(unknown) or '(none)'}; use {', '.join(SAGE_CONFIGS)}",
                             field="configs")
    notes = []
    if strip and annotated:
        notes.append("--strip-annotations: user_values/agent_acts removed before every SAGE run.")
    elif not annotated:
        notes.append("The slice carries no user_values/agent_acts annotations: every run is already text-only.")
    # an endpoint counts as configured with a key, or with a non-default (e.g. local) base URL
    llm_configured = bool(settings.llm_api_key) or "api.openai.com" not in settings.llm_base_url
    if llm_configured and "sage-llm" not in configs:
        configs.append("sage-llm")
    elif not llm_configured and "sage-llm" in configs:
        configs.remove("sage-llm")
        notes.append("sage-llm skipped: no LLM endpoint configured (SAGE_LLM_API_KEY).")
    primary = configs[0]
    # read every input before the (slow) SAGE runs, so a bad file fails fast
    baselines = {}
    ids = {t.turn_id for t in turns}
    for path in args.baselines:
        ev = read_evaluator_verdicts(path)
        missing = sorted(ids - set(ev.labels))
        if missing:
            raise SageInputError(f"no verdict for {len(missing)} slice turns (first: '{missing[0]}')",
                                 file=path, field="turn_id")
        if ev.name in baselines or ev.name in configs:
            raise SageInputError(f"evaluator name '{ev.name}' is used twice", file=path, field="evaluator")
        baselines[ev.name] = ev
    variants = {}  # SGD-X: remap up front so a schema mismatch fails before any evaluation
    if args.sgdx_dir:
        from sage_core.corpora.schemas import load_schema
        from sage_core.corpora.sgd.loader import remap_turns, sgdx_slot_map
        for schema_path in sgdx_variants(args.sgdx_dir):
            vreg = load_schema(schema_path)
            vturns = remap_turns(turns, sgdx_slot_map(registry, vreg), vreg)
            variants[schema_path.parent.name] = (vreg, strip_annotations(vturns) if strip else vturns)
    sage, verdicts, backend_name = {}, {}, None
    for cfg in configs:
        try:
            vs, bname, secs = run_sage(turns, registry, cfg, backend, settings=settings)
        except ModelUnavailableError as e:
            if cfg == primary:
                raise
            notes.append(f"{cfg} skipped: {e}")
            continue
        verdicts[cfg] = vs
        sage[cfg] = from_turn_verdicts(cfg, vs)
        backend_name = backend_name or bname
        notes.append(f"{cfg}: {len(turns)} turns in {secs:.2f} s ({1000 * secs / len(turns):.1f} ms/turn"
                     + (", includes model loading)." if len(sage) == 1 else ")."))
    text_only = None
    if want_text_only:
        vs, _, secs = run_sage(strip_annotations(turns), registry, primary, backend, settings=settings)
        name = primary + TEXT_ONLY_SUFFIX
        verdicts[primary + "_text-only"] = vs
        text_only = dataclasses.replace(from_turn_verdicts(primary, vs), name=name)
        notes.append(f"{name}: {len(turns)} turns in {secs:.2f} s ({1000 * secs / len(turns):.1f} ms/turn).")
    sgdx, sgdx_text = None, None
    if variants:
        sgdx, sgdx_text = {}, ({} if text_only is not None else None)
        for name, (vreg, vturns) in variants.items():
            vs, _, _ = run_sage(vturns, vreg, primary, backend, settings=settings)
            sgdx[name] = from_turn_verdicts(primary, vs)
            if sgdx_text is not None:
                vs, _, _ = run_sage(strip_annotations(vturns), vreg, primary, backend, settings=settings)
                sgdx_text[name] = from_turn_verdicts(primary, vs)
    data = build_report(turns, sage, baselines, primary=primary, sgdx=sgdx, s2_backend=backend_name,
                        n_resamples=args.n_resamples, seed=args.seed,
                        cluster_by_dialogue=args.cluster_by_dialogue, notes=notes, text_only=text_only,
                        annotations_stripped=strip, sgdx_text_only=sgdx_text)
    md = render(data, primary, list(baselines), Path(args.slice).name)
    print(md)
    if args.out_dir:
        out = Path(args.out_dir)
        files = write_outputs(data, md, turns, {**{k: v for k, v in sage.items()}, **baselines}, out)
        for cfg, vs in verdicts.items():
            p = out / f"verdicts_{cfg}.jsonl"
            with open(p, "w", encoding="utf-8", newline="\n") as fh:
                for v in vs:
                    fh.write(json.dumps(v.to_dict()) + "\n")
            files.append(p)
        print("wrote " + ", ".join(str(f) for f in files))
    return 0
