"""Scenarios as data: the YAML format, its JSON Schema, the typed model and the loader."""
