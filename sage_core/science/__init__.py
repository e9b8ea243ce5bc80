"""Experiment science around the evaluator: failure injection, slice building, statistics, metrics, the report."""
