"""The observer: one watch-based recorder of what happened, kept as evidence. It never judges."""
