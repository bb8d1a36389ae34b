"""Cluster backends (embedded, kind, existing) behind one protocol, and the nodes they are given."""
