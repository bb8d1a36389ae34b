"""Expectations judged on the observed timeline: predicates, windows, and timeline checks."""
