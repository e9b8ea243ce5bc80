"""``python -m sage_core <command>``: evaluate, build-slice, report, ...

Each command lives in its own module exposing ``add_arguments(parser)`` and
``run(args) -> int``; this file only dispatches and turns input errors into a
one-line message with exit code 2 (never a traceback).
"""
from __future__ import annotations

import argparse
import importlib
import sys

from sage_core.data.errors import ModelUnavailableError, SageInputError

COMMANDS = {
    "evaluate": ("sage_core.cli.evaluate", "run the SAGE cascade over a slice and write verdicts"),
    "build-slice": ("sage_core.science.slice_builder", "build a failure-injected slice from a corpus"),
    "report": ("sage_core.science.report.cli", "Table-1 style comparison, ablations, robustness"),
    "load-outputs": ("sage_core.corpora.system_outputs.loader", "turn real MultiWOZ agent outputs into a slice"),
    "baseline": ("sage_core.llm.baselines.cli", "run an LLM-judge baseline (G-Eval, FrugalGPT, direct) over a slice"),
    "load-agent-logs": ("sage_core.corpora.agent_logs.cli",
                        "turn tool-calling agent logs (OpenAI transcripts, tau-bench) into a slice + spec"),
    "train-heads": ("sage_core.science.heads.train",
                    "train the learned act / requested-slot heads on SGD train, calibrate on dev, write the JSON"),
    "mine-aliases": ("sage_core.science.alias_mining",
                     "mine categorical value aliases from SGD train, check them on dev, write the JSON"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sage_core", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name, (modname, help_) in COMMANDS.items():
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name == modname:
                continue  # command not built yet
            raise
        p = sub.add_parser(name, help=help_, description=help_)
        mod.add_arguments(p)
        modules[name] = mod
    args = parser.parse_args(argv)
    try:
        return int(modules[args.command].run(args) or 0)
    except SageInputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except ModelUnavailableError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # the environment, not the input's content: disk full, permissions, a vanished file
        where = f"{e.filename}: " if e.filename else ""
        print(f"error: {where}{e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
