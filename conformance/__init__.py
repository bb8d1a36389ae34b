"""The Volcano conformance kit: a pytest-driven harness that scores Volcano-compatible schedulers."""
