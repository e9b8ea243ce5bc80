"""MultiWOZ 2.2 / 2.4: loaders, the booking overlay, and the corpus profile."""
