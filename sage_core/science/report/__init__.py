"""The paper's comparison report: compute the numbers, render Markdown, draw plots, the CLI command."""
