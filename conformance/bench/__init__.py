"""Benchmarks: figures printed by a command, never asserted on time in a test."""
