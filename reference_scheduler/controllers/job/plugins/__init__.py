"""Job plugins: what `spec.plugins` adds to a Job's pods and objects.

Upstream: pkg/controllers/job/plugins/ (the interface: OnPodCreate, OnJobAdd, OnJobUpdate,
OnJobDelete). As there, one module per plugin (env, svc, ssh, and the distributed frameworks mpi,
pytorch, tensorflow, hcclrank, ray), registered by name in factory.py; base.py holds the hooks
every plugin has (`on_pod_create`, and `objects`, the objects its job add/update/delete keep) and
the helpers they share.
"""
