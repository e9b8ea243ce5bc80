"""Corpus loaders: real dialogue corpora -> ``list[Turn]`` + ``WorkflowRegistry``."""
