"""Helpers shaped as in Volcano's pkg/scheduler/util/."""
