"""The import contracts of ARCHITECTURE.md, checked on the source (every import, also those inside functions).

- ``sage_core`` never imports streamlit, ``ui``, ``db`` or ``audit``;
- ``sage_core.evaluator`` never imports ``sage_core.science`` (the evaluator must not see how failures are injected
  or scored) nor a corpus package (corpus knowledge reaches it as a ``CorpusProfile`` argument);
- ``sage_core.specs`` imports only ``sage_core.data`` and itself;
- ``sage_core.science.inject`` uses only data types and specs (injection stays independent of the evaluator);
- pages import ``sage_core``'s public API (``from sage_core import ...``), ``ui``, ``audit`` and ``db`` only.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def imported_modules(path: Path, package: list[str] | None = None) -> list[tuple[int, str]]:
    """(line, absolute module) for every import in a file; relative imports resolved against its package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    if package is None:
        package = list(path.relative_to(REPO).parts[:-1])
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((node.lineno, mod))
            # "from sage_core import evaluator" imports a subpackage too
            out.extend((node.lineno, f"{mod}.{a.name}") for a in node.names if mod.startswith("sage_core"))
    return out


def _under(mod: str, prefix: str) -> bool:
    return mod == prefix or mod.startswith(prefix + ".")


def violations(files: list[Path], forbidden) -> list[str]:
    bad = []
    for f in files:
        for line, mod in imported_modules(f):
            why = forbidden(mod)
            if why:
                bad.append(f"{f.relative_to(REPO)}:{line} imports {mod} ({why})")
    return bad


def py(folder: str) -> list[Path]:
    return sorted(p for p in (REPO / folder).rglob("*.py") if "__pycache__" not in p.parts)


def test_sage_core_never_imports_the_app_or_the_audit_layer():
    def forbidden(mod):
        for top in ("streamlit", "ui", "db", "audit"):
            if _under(mod, top):
                return f"sage_core must not depend on {top}"
    assert violations(py("sage_core"), forbidden) == []


def test_evaluator_never_imports_science_or_a_corpus():
    def forbidden(mod):
        if _under(mod, "sage_core.science"):
            return "the evaluator must not see injection or scoring"
        if _under(mod, "sage_core.corpora"):
            return "corpus knowledge reaches the evaluator as a CorpusProfile argument"
    assert violations(py("sage_core/evaluator"), forbidden) == []


def test_specs_depend_on_data_only():
    def forbidden(mod):
        if _under(mod, "sage_core") and not (_under(mod, "sage_core.data") or _under(mod, "sage_core.specs")):
            return "specs may use sage_core.data only"
    assert violations(py("sage_core/specs"), forbidden) == []


def test_inject_uses_only_data_types_and_specs():
    def forbidden(mod):
        if _under(mod, "sage_core") and not (_under(mod, "sage_core.data") or _under(mod, "sage_core.specs")):
            return "injection stays independent of the evaluator"
    assert violations([REPO / "sage_core" / "science" / "inject.py"], forbidden) == []


def test_pages_use_only_the_public_api():
    files = py("pages") + [REPO / "app.py"]
    assert files, "no pages found"
    bad = []
    for f in files:
        for line, mod in imported_modules(f):
            if mod.startswith("sage_core.") and mod.rsplit(".", 1)[0] != "sage_core":
                bad.append(f"{f.relative_to(REPO)}:{line} imports {mod} (pages use `from sage_core import ...`)")
            if mod.startswith("sage_core.") and mod.rsplit(".", 1)[0] == "sage_core":
                import sage_core
                name = mod.rsplit(".", 1)[1]
                if name not in sage_core.__all__:
                    bad.append(f"{f.relative_to(REPO)}:{line} imports {name}, which is not in sage_core.__all__")
    assert bad == []


def test_public_api_names_resolve():
    import sage_core

    missing = [n for n in sage_core.__all__ if getattr(sage_core, n, None) is None]
    assert missing == []
    with pytest.raises(AttributeError):
        sage_core.no_such_name  # noqa: B018


def test_the_checker_sees_violations_inside_functions_and_relative_imports(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from ...science import statistics\n    import streamlit as st\n")
    found = [m for _, m in imported_modules(probe, package=["sage_core", "evaluator", "verify"])]
    assert "sage_core.science" in found and "streamlit" in found


CORPUS_NAMES = re.compile(r"multiwoz|mwoz|\babcd\b|\bsgd\b|schema-guided|tau-bench|tau_bench", re.I)


def test_no_corpus_name_in_the_evaluator():
    """Corpus knowledge lives in sage_core/corpora/<corpus>/profile.py, not in generic code (comments included)."""
    bad = [f"{p.relative_to(REPO)}:{i}: {line.strip()[:80]}" for p in py("sage_core/evaluator")
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if CORPUS_NAMES.search(line)]
    assert bad == []


def test_specs_name_no_corpus_beyond_the_sgd_file_format():
    """specs/ may name the SGD *file format* it reads; no corpus tables, no MultiWOZ / ABCD / tau-bench knowledge."""
    no_format = re.compile(r"multiwoz|mwoz|\babcd\b|tau-bench|tau_bench", re.I)
    bad = [f"{p.relative_to(REPO)}:{i}" for p in py("sage_core/specs")
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           if no_format.search(line) and "share it" not in line and "SGD / SGD-X / MultiWOZ 2.2" not in line]
    assert bad == []


ENTRY_POINTS = ("sage_core/cli/", "/cli.py", "sage_core/data/settings.py")


def test_only_entry_points_read_the_environment():
    """Library constructors take their parameters; only CLI commands (and the app) call get_settings / os.environ."""
    reads = re.compile(r"get_settings\(\)|os\.environ(?:\.get)?\(|os\.environ\[|os\.getenv\(")
    bad = []
    for p in py("sage_core"):
        rel = str(p.relative_to(REPO))
        if any(e in "/" + rel for e in ENTRY_POINTS):
            continue
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if reads.search(line) and "os.environ.setdefault" not in line:
                bad.append(f"{rel}:{i}: {line.strip()[:80]}")
    assert bad == []
