"""Implementation adapters: start, find and stop an implementation under test; declare what it claims."""
