"""SAGE: State-Grounded, Abstention-Aware Evaluation of task-oriented dialogue agents.

The evaluator library. No Streamlit imports here: the app, the CLI and the
benchmarks all build on this package.
"""
__version__ = "0.1.0"
