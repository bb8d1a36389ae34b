"""Why a Job is refused: each rule of Volcano's job admission, with its reason.

Upstream: pkg/webhooks/admission/jobs/validate/admit_job.go and util.go. The reasons keep the
phrases Volcano's users see (`duplicated task name`, `must not specify event and exitCode
simultaneously`, ...) since scenarios and users match on them.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from reference_scheduler.controllers.job import policies
from reference_scheduler.controllers.job.plugins import factory, mpi, ray
from reference_scheduler.kube import quantity
from reference_scheduler.webhooks import validate_queue

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
POLICY_EVENTS = ("*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed", "JobUpdated")
POLICY_ACTIONS = ("AbortJob", "RestartJob", "RestartTask", "RestartPod", "TerminateJob", "CompleteJob", "ResumeJob")
# The queue lookups the Job rules take are the queue rules' (one place says what they are).
QueueLookup = validate_queue.QueueLookup
QueueList = validate_queue.QueueList


def dns1123_label_errors(value: str) -> str | None:
    if len(value) > 63:
        return f"must be no more than 63 characters: {value!r}"
    if not DNS1123_LABEL.match(value):
        return f"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character: {value!r}"
    return None


def qualified_name_errors(value: str) -> str | None:
    if len(value) > 63:
        return f"name part must be no more than 63 characters: {value!r}"
    if not QUALIFIED_NAME.match(value):
        return f"name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character: {value!r}"
    return None


def policy_errors(items: Sequence[Mapping[str, Any]]) -> str | None:
    seen_events: set[str] = set()
    seen_codes: set[int] = set()
    for policy in items:
        events = policies.events_of(policy)
        has_code = policy.get("exitCode") is not None
        if events and has_code:
            return "must not specify event and exitCode simultaneously"
        if not events and not has_code:
            return "either event and exitCode should be specified"
        if events:
            for event in events:
                if event not in POLICY_EVENTS:
                    return f"Invalid value: {event!r}: invalid policy event"
                if policy.get("action") not in POLICY_ACTIONS:
                    return f"Invalid value: {policy.get('action')!r}: invalid policy action"
                if event in seen_events:
                    return f"duplicate event {event}  across different policy"
                seen_events.add(event)
        else:
            code = int(policy["exitCode"])
            if code == 0:
                return "0 is not a valid error code"
            if code in seen_codes:
                return f"duplicate exitCode {code}"
            seen_codes.add(code)
            if policy.get("action") not in POLICY_ACTIONS:
                return f"Invalid value: {policy.get('action')!r}: invalid policy action"
    if "*" in seen_events and len(seen_events) > 1:
        return "if there's * here, no other policy should be here"
    return None


def _valid_lists() -> str:
    return f" valid events are {list(POLICY_EVENTS)}, valid actions are {list(POLICY_ACTIONS)};"


def volume_errors(volumes: Sequence[Mapping[str, Any]]) -> str | None:
    paths: set[str] = set()
    for volume in volumes:
        path = volume.get("mountPath") or ""
        if not path:
            return " mountPath is required;"
        if path in paths:
            return f" duplicated mountPath: {path};"
        if not volume.get("volumeClaim") and not volume.get("volumeClaimName"):
            return " either VolumeClaim or VolumeClaimName must be specified;"
        if volume.get("volumeClaimName") and volume.get("volumeClaim"):
            return " conflict: If you want to use an existing PVC, just specify VolumeClaimName. If you want to create a new PVC, you do not need to specify VolumeClaimName;"
        paths.add(path)
    return None


def _overcommit_allowed(name: str) -> bool:
    """Kubernetes' IsOvercommitAllowed: a native resource (no domain, or kubernetes.io's) that is not
    hugepages; an extended resource (a GPU) can only be asked for whole, its request equal to its
    limit."""
    return ("/" not in name or "kubernetes.io/" in name) and not name.startswith("hugepages-")


def _amount(raw: object) -> str:
    """The quantity as Kubernetes writes it back in a message (`2`, `500m`, `1Gi`)."""
    return quantity.canonical(*quantity.exact_milli(raw))


def _container_resource_error(resources: Mapping[str, Any], at: str) -> str | None:
    """The first problem of one container's requests and limits, in Kubernetes' words: a value
    below zero, a request above its limit, and for a resource that cannot be overcommitted a
    request without a limit or unequal to it. (A pod template's requests are not defaulted from
    its limits: that defaulting is a Pod's.)"""
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    for kind, values in (("limits", limits), ("requests", requests)):
        for name, raw in sorted(values.items()):
            try:
                negative = quantity.parse(raw) < 0
            except ValueError:
                return None  # the API server refuses what is no quantity, before any webhook
            if negative:
                return f' {at}.resources.{kind}[{name}]: Invalid value: "{raw}": must be greater than or equal to 0;'
    for name, raw in sorted(requests.items()):
        if name not in limits:
            if not _overcommit_allowed(name):
                return f" {at}.resources.limits: Required value: Limit must be set for non overcommitable resources;"
            continue
        asked, limit = quantity.exact_milli(raw)[0], quantity.exact_milli(limits[name])[0]
        if asked != limit and not _overcommit_allowed(name):
            return f' {at}.resources.requests: Invalid value: "{_amount(raw)}": must be equal to {name} limit of {_amount(limits[name])};'
        if asked > limit:
            return f' {at}.resources.requests: Invalid value: "{_amount(raw)}": must be less than or equal to {name} limit of {_amount(limits[name])};'
    return None


def resource_requirement_errors(task: Mapping[str, Any], index: int) -> str | None:
    """The first problem of the task template's container resources, as Kubernetes' pod template
    validation reports it; Volcano's webhook runs that validation on every task (admit_job.go,
    validateTaskTemplate; k8s pkg/apis/core/validation, validateResourceRequirements)."""
    spec = (task.get("template") or {}).get("spec") or {}
    for field in ("initContainers", "containers"):
        for position, container in enumerate(spec.get(field) or []):
            found = _container_resource_error(container.get("resources") or {}, f"spec.task[{index}].template.spec.{field}[{position}]")
            if found:
                return found
    return None


def _has_cycle(tasks: Sequence[Mapping[str, Any]]) -> bool:
    graph = {t.get("name", ""): list((t.get("dependsOn") or {}).get("name") or []) for t in tasks}
    state: dict[str, int] = {}

    def visit(node: str) -> bool:
        if state.get(node) == 1:
            return True
        if state.get(node) == 2 or node not in graph:
            return False
        state[node] = 1
        if any(visit(n) for n in graph[node]):
            return True
        state[node] = 2
        return False

    return any(visit(n) for n in graph)


def topology_errors(topology: Mapping[str, Any] | None) -> str:
    """v1.14: a topology names its highest tier by number or by name, not both."""
    if topology and topology.get("highestTierAllowed") is not None and topology.get("highestTierName"):
        return "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously"
    return ""


def partition_errors(task: Mapping[str, Any], job_name: str) -> str:
    """v1.14: a task's partitions cover its replicas exactly; a task minAvailable (the webhook has
    defaulted it by now) is whole partitions when minPartitions is given (the `minPartitions > 0`
    guard is v1.14.3's and v1.15.1's). Upstream: validatePartitionPolicy."""
    policy = task.get("partitionPolicy")
    if not policy:
        return ""
    where = f"in task: {task.get('name', '')}, job: {job_name}"
    total = int(policy.get("totalPartitions") or 0)
    size = int(policy.get("partitionSize") or 0)
    wanted = int(policy.get("minPartitions") or 0)
    msg = ""
    if total <= 0:
        msg = f"'TotalPartitions' must be greater than 0 {where}"
    elif size <= 0:
        msg = f"'PartitionSize' must be greater than 0 {where}"
    elif int(task.get("replicas") or 0) != total * size:
        msg = f"'Replicas' are not equal to TotalPartitions*PartitionSize {where}"
    elif task.get("minAvailable") is not None and wanted > 0 and wanted * size != int(task["minAvailable"]):
        msg = f"'MinAvailable' is not equal to MinPartitions*PartitionSize {where}"
    return msg + topology_errors(policy.get("networkTopology"))


def validate_create(job: Mapping[str, Any], queue: QueueLookup, queues: QueueList, head_task_required: bool = True) -> str:
    """The reason a new Job is refused, or '' when it is admitted."""
    spec = job.get("spec") or {}
    name = (job.get("metadata") or {}).get("name", "")
    if int(spec.get("minAvailable") or 0) < 0:
        return "job 'minAvailable' must be >= 0."
    if int(spec.get("maxRetry") or 0) < 0:
        return "'maxRetry' cannot be less than zero."
    if spec.get("ttlSecondsAfterFinished") is not None and int(spec["ttlSecondsAfterFinished"]) < 0:
        return "'ttlSecondsAfterFinished' cannot be less than zero."
    tasks = spec.get("tasks") or []
    if not tasks:
        return "No task specified in job spec"
    plugins = spec.get("plugins") or {}
    names = {t.get("name") for t in tasks}
    # An mpi job needs its master task; since v1.15 it may have no worker task (upstream commit
    # 4cfa79f5f, "mpi job could only have master"), which the reference models.
    if "mpi" in plugins and mpi.Mpi("mpi", list(plugins["mpi"] or [])).flags.master not in names:
        return "The specified mpi master task was not found"
    if head_task_required and "ray" in plugins:
        # SHOULD (upstream proposal volcano-sh/volcano PR 5659): refuse a ray job without its head.
        head = ray.Ray("ray", list(plugins["ray"] or [])).flags.head
        if head not in names:
            return f"the ray plugin needs a head task named {head!r}; job {name} has none"
    msg = topology_errors(spec.get("networkTopology"))
    seen: set[str] = set()
    total = 0
    for task in tasks:
        tname = task.get("name", "")
        replicas = int(task.get("replicas") or 0)
        if replicas < 0:
            msg += f" 'replicas' < 0 in task: {tname}, job: {name};"
        if task.get("minAvailable") is not None:
            tmin = int(task["minAvailable"])
            if tmin < 0:
                msg += f" 'minAvailable' < 0 in task: {tname}, job: {name};"
            elif tmin > replicas:
                msg += f" 'minAvailable' is greater than 'replicas' in task: {tname}, job: {name};"
        total += replicas
        err = dns1123_label_errors(tname)
        if err:
            msg += f" [{err}];"
        if tname in seen:
            msg += f" duplicated task name {tname};"
            break
        seen.add(tname)
        err = policy_errors(task.get("policies") or [])
        if err:
            msg += err + _valid_lists()
        if not ((task.get("template") or {}).get("spec") or {}).get("containers"):
            msg += f" spec.task[{tasks.index(task)}].template.spec.containers: Required value;"
        err = resource_requirement_errors(task, tasks.index(task))
        if err:
            msg += err
        msg += partition_errors(task, name)
    err = qualified_name_errors(name)
    if err:
        msg += f" create job with name {name} validate failed [{err}]"
    if total < int(spec.get("minAvailable") or 0):
        msg += " job 'minAvailable' should not be greater than total replicas in tasks;"
    err = policy_errors(spec.get("policies") or [])
    if err:
        msg += err + _valid_lists()
    for plugin in plugins:
        if plugin not in factory.KNOWN:
            msg += f" unable to find job plugin: {plugin};"
    err = volume_errors(spec.get("volumes") or [])
    if err:
        msg += err
    queue_name = spec.get("queue") or "default"
    q = queue(queue_name)
    if q is None:
        msg += f' unable to find job queue: queue.scheduling.volcano.sh "{queue_name}" not found;'
    else:
        # Volcano's rule: only a queue whose status says Open takes jobs. A queue created a moment
        # ago has no state until the queue controller opens it, and is refused until then.
        state = (q.get("status") or {}).get("state") or ""
        if state != "Open":
            msg += f" can only submit job to queue with state `Open`, queue `{queue_name}` status is `{state}`;"
        if queue_name == "root":
            msg += " can not submit job to root queue;"
        else:
            kids = validate_queue.children(queue_name, queues)
            if kids:
                msg += f" can only submit job to leaf queue, queue `{queue_name}` has {len(kids)} child queues;"
    if any(t.get("dependsOn") for t in tasks) and _has_cycle(tasks):
        msg += " job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG);"
    return msg.strip()


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """Only minAvailable, task replicas and priorityClassName may change (elastic scaling), and
    the claim name the controller generates for a volume. Upstream: validateJobUpdate."""
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    total = 0
    for task in new_spec.get("tasks") or []:
        replicas = int(task.get("replicas") or 0)
        if replicas < 0:
            return f"'replicas' must be >= 0 in task: {task.get('name')}"
        if task.get("minAvailable") is not None:
            if int(task["minAvailable"]) < 0:
                return f"'minAvailable' must be >= 0 in task: {task.get('name')}"
            if int(task["minAvailable"]) > replicas:
                return f"'minAvailable' must be <= 'replicas' in task: {task.get('name')}"
        err = partition_errors(task, (new.get("metadata") or {}).get("name", ""))
        if err:
            return err
        total += replicas
    if int(new_spec.get("minAvailable") or 0) > total:
        return "job 'minAvailable' must not be greater than total replicas"
    if int(new_spec.get("minAvailable") or 0) < 0:
        return "job 'minAvailable' must be >= 0"
    err = topology_errors(new_spec.get("networkTopology"))
    if err:
        return err
    if len(old_spec.get("tasks") or []) != len(new_spec.get("tasks") or []):
        return "job updates may not add or remove tasks"

    def frozen(spec: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in spec.items() if k not in ("minAvailable", "priorityClassName")}
        out["tasks"] = [{k: v for k, v in t.items() if k not in ("replicas", "minAvailable")} for t in spec.get("tasks") or []]
        # The job controller writes the name it generated for a volume's claim spec.
        if spec.get("volumes"):
            out["volumes"] = [{k: x for k, x in v.items() if not (k == "volumeClaimName" and v.get("volumeClaim"))} for v in spec["volumes"]]
        return out

    if frozen(new_spec) != frozen(old_spec):
        return "job updates may not change fields other than `minAvailable`, `tasks[*].replicas under spec` and `PriorityClassName`"
    return ""
