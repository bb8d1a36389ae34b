"""Scheduling actions, one per file. Upstream: pkg/scheduler/actions/."""
