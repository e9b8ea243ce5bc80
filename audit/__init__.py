from . import assignment  # noqa: F401
