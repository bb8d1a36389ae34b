"""The result tree of a run, its score, and one module per output format (json, junit, html)."""
