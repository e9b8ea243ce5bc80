"""Workflow specs W and the readers of spec files (SGD-format schema.json, our YAML). Generic: no corpus knowledge."""
