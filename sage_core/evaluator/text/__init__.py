"""Text understanding: value normalisation and extraction of user values and agent acts from raw text."""
