"""Data types, input errors, settings and the slice / verdict file formats: what every other part speaks."""
