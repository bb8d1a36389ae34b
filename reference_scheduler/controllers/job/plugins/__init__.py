"""Job plugins: what `spec.plugins` adds to a Job's pods and objects.

Upstream: pkg/controllers/job/plugins/ (the interface: OnPodCreate, OnJobAdd, OnJobUpdate,
OnJobDelete). Each plugin here is a small class with the same four hooks.
"""
