"""The env plugin: every container and init container learns its pod's index in the task.

Upstream: pkg/controllers/job/plugins/env/env.go.
"""

from __future__ import annotations

import dataclasses

from reference_scheduler.controllers.job.plugins.base import (
    Obj,
    Plugin,
    add_env,
    containers,
    pod_index,
)

NAME = "env"


@dataclasses.dataclass
class Env(Plugin):
    """VK_TASK_INDEX and VC_TASK_INDEX on every container and init container."""

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        index = str(pod_index(pod))
        for c in containers(pod):
            add_env(c, {"name": "VK_TASK_INDEX", "value": index}, {"name": "VC_TASK_INDEX", "value": index})
