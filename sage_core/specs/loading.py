"""``load_workflows``: one entry point that picks the spec reader by file content."""
from __future__ import annotations

from pathlib import Path

from sage_core.specs.from_tools import is_tool_spec_file, load_tool_spec
from sage_core.specs.sgd_format import load_sgd_schema
from sage_core.specs.workflow import WorkflowRegistry
from sage_core.specs.yaml_spec import load_workflow_spec


def load_workflows(path: str | Path) -> WorkflowRegistry:
    """Dispatch on content: SGD-format schema list, our ``workflows:`` spec, or a tool-calling spec."""
    p = str(path)
    if is_tool_spec_file(p):
        return load_tool_spec(p)
    if p.endswith((".yaml", ".yml")):
        return load_workflow_spec(p)
    return load_sgd_schema(p)
