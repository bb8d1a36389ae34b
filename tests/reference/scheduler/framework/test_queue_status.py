"""What the scheduler writes on Queues at the end of a cycle (framework/queue_status.py), in
memory: every allocated task's resources and a pod count, on its queue and up the spec.parent
chain to root; only where they changed; a resource no longer held removed."""

from __future__ import annotations

from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.framework import framework
from tests.reference.builders import node, podgroup, queue, sized
from tests.reference.scheduler_harness import FakeCache

CONF = conf_load.parse("""
actions: "allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}]
""")


def test_allocated_resources_are_written_on_the_queue_and_its_ancestors() -> None:
    queues = [queue("root"), queue("default"), queue("eng", parent="root"), queue("dev", parent="eng")]
    pods = [sized("run-0", "g", "1500m", "1Gi", node_name="n0", phase="Running"), sized("new-0", "g", "500m", "512Mi"), sized("new-1", "g", "1", "1Gi")]
    cache = FakeCache([node("n0", "4")], pods, [podgroup("g", 1, queue="dev", phase="Running")], queues)
    framework.run_cycle(cache, CONF)
    # new-0 and new-1 are allocated this cycle (Binding): 3 CPUs, 2.5Gi, three pods in all.
    three = {"cpu": "3", "memory": "2560Mi", "pods": "3"}
    assert cache.queue_allocated == {"dev": three, "eng": three, "root": three, "default": {"cpu": "0", "memory": "0"}}


def test_nothing_is_written_where_nothing_changed_and_a_freed_resource_is_removed() -> None:
    queues = [
        queue("root"),
        queue("same", parent="root", allocated={"cpu": "1000m", "memory": "1Gi", "pods": "1"}),
        queue("freed", parent="root", allocated={"cpu": "1", "memory": "0", "pods": "1", "nvidia.com/gpu": "1"}),
    ]
    queues[0]["status"]["allocated"] = {"cpu": "1", "memory": "1Gi", "pods": "1"}
    pods = [sized("s-0", "s", "1", "1Gi", node_name="n0", phase="Running")]
    cache = FakeCache([node("n0", "4")], pods, [podgroup("s", 1, queue="same", phase="Running")], queues)
    framework.run_cycle(cache, CONF)
    assert cache.queue_allocated == {"freed": {"cpu": "0", "memory": "0", "pods": None, "nvidia.com/gpu": None}}
