"""Scheduler plugins, one per file, each with NAME equal to its conf name. Upstream: pkg/scheduler/plugins/."""
