"""Batch evaluation past one machine, on Ray Data (see ``ray_engine``).

Why Ray Data rather than Dask or Spark: the work is a stateful per-worker
model (one evaluator with its encoder, loaded once) applied to a stream of
independent JSONL lines. Ray Data has exactly that primitive
(``map_batches`` with an actor class), streams with back-pressure instead of
materialising partitions, runs the same code on a laptop (``ray.init``) and on
a cluster (``RAY_ADDRESS``), and is a pip install (no JVM as for Spark).
Dask would need a hand-managed per-worker model cache (``Client.run`` or
worker plugins) for the same effect.
"""
from __future__ import annotations

from sage_core.distributed.ray_engine import SageBatchEvaluator, evaluate_with_ray, ray_session

__all__ = ["SageBatchEvaluator", "evaluate_with_ray", "ray_session"]
