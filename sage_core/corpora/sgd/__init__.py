"""The Schema-Guided Dialogue corpus (and SGD-X renderings): loader and profile."""
