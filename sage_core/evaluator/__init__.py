"""The SAGE evaluator: text understanding, compilation into criteria, the S1/S2/S3 cascade, aggregation, repair."""
