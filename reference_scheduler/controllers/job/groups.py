"""The API groups and versions the job controller reads and writes, as (group, version) pairs for
the custom-objects client. Upstream: pkg/apis (batch, scheduling, bus)."""

from __future__ import annotations

BATCH = ("batch.volcano.sh", "v1alpha1")
SCHEDULING = ("scheduling.volcano.sh", "v1beta1")
BUS = ("bus.volcano.sh", "v1alpha1")
