"""The reference controllers: the Volcano Job controller (and, later, queue and PodGroup)."""
