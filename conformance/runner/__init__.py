"""Running scenarios: the per-process context, steps, and one scenario from start to verdict."""
