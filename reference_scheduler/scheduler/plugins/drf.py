"""drf: dominant resource fairness. A job's share is the largest fraction of any one cluster
resource it holds (its dominant share); the job with the smaller share goes first, and a task may
take a victim's place only while the victim's job, once the victim is gone, still holds at least
the share the preemptor's job will hold with it (so preemption never inverts who is behind).

With `enableHierarchy: true` queues are also ordered, and reclaimed from, by hierarchical DRF
over their `volcano.sh/hierarchy` paths (see drf_hierarchy.py).

Shares count every resource the cluster has plus `pods` (one per task), as Volcano does.
Upstream: pkg/scheduler/plugins/drf/drf.go, docs/design/drf.md, docs/design/hdrf.md. (v1.13 has
no namespace order in drf any more, so neither has the kit.)
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from reference_scheduler.kube import quantity
from reference_scheduler.scheduler.api import job_info, queue_info
from reference_scheduler.scheduler.framework import interface
from reference_scheduler.scheduler.framework.session import EventHandler, Session
from reference_scheduler.scheduler.plugins import drf_hierarchy as tree

log = logging.getLogger(__name__)
NAME = "drf"
SHARE_DELTA = 0.000001


def task_vector(task: job_info.TaskInfo) -> tree.Vector:
    vector = dict(task.resreq.values)
    vector[tree.PODS] = 1.0
    return vector


def cluster_total(ssn: Session) -> tree.Vector:
    total = dict(ssn.total_resource.values)
    total[tree.PODS] = sum(quantity.parse(((n.node.get("status") or {}).get("allocatable") or {}).get("pods", 0)) for n in ssn.nodes.values())
    return total


class Drf:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments
        self.total: tree.Vector = {}
        self.total_allocated: tree.Vector = {}
        self.attrs: dict[str, tree.Attr] = {}
        self.requests: dict[str, tree.Vector] = {}
        self.root = tree.new_root()

    def share_of(self, allocated: tree.Vector) -> float:
        return tree.dominant_share(allocated, self.total)[1]

    def _update_tree(self, root: tree.Node, total_allocated: tree.Vector, job: job_info.JobInfo, attr: tree.Attr, queue: queue_info.QueueInfo) -> None:
        tree.update(root, self.total, total_allocated, job.uid, attr, self.requests[job.uid], queue.hierarchy, queue.weights)

    def on_session_open(self, ssn: Session) -> None:
        self.total = cluster_total(ssn)
        hierarchy = ssn.hierarchy_enabled(NAME)
        for job in ssn.jobs.values():
            attr = tree.Attr()
            request: tree.Vector = {}
            for task in job.tasks.values():
                tree.add(request, task_vector(task))
                if task.status in job_info.ALLOCATED:
                    tree.add(attr.allocated, task_vector(task))
            attr.update(self.total)
            self.attrs[job.uid] = attr
            self.requests[job.uid] = request
            if hierarchy and job.queue in ssn.queues:
                tree.add(self.total_allocated, attr.allocated)
                self._update_tree(self.root, self.total_allocated, job, attr, ssn.queues[job.queue])

        ssn.add_preemptable_fn(NAME, self._preemptable)
        ssn.add_job_order_fn(NAME, self._job_order)
        if hierarchy:
            ssn.add_queue_order_fn(NAME, self._queue_order)
            ssn.add_reclaimable_fn(NAME, lambda reclaimer, reclaimees: self._reclaimable(ssn, reclaimer, reclaimees))

        def on_change(task: job_info.TaskInfo, sign: float) -> None:
            attr = self.attrs.get(task.job)
            job = ssn.jobs.get(task.job)
            if attr is None or job is None:
                return
            tree.add(attr.allocated, task_vector(task), sign)
            attr.update(self.total)
            if hierarchy and job.queue in ssn.queues:
                tree.add(self.total_allocated, task_vector(task), sign)
                self._update_tree(self.root, self.total_allocated, job, attr, ssn.queues[job.queue])

        ssn.event_handlers.append(EventHandler(lambda task: on_change(task, 1.0), lambda task: on_change(task, -1.0)))

    def _job_order(self, left: job_info.JobInfo, right: job_info.JobInfo) -> int:
        """The smaller dominant share first."""
        ls, rs = self.attrs[left.uid].share, self.attrs[right.uid].share
        return 0 if ls == rs else (-1 if ls < rs else 1)

    def _preemptable(self, preemptor: job_info.TaskInfo, preemptees: list[job_info.TaskInfo]) -> tuple[list[job_info.TaskInfo], int]:
        """A preemptee is a victim while its job's share without it (and without the victims of
        the same job before it) is at least the preemptor's job's share with the preemptor."""
        mine = self.attrs.get(preemptor.job)
        if mine is None:
            return [], interface.ABSTAIN
        ls = self.share_of(tree.add(dict(mine.allocated), task_vector(preemptor)))
        remaining: dict[str, tree.Vector] = {}
        victims = []
        for task in preemptees:
            theirs = self.attrs.get(task.job)
            if theirs is None:
                continue
            allocated = remaining.setdefault(task.job, dict(theirs.allocated))
            tree.add(allocated, task_vector(task), -1.0)
            rs = self.share_of(allocated)
            if ls < rs or abs(ls - rs) <= SHARE_DELTA:
                victims.append(task)
        log.debug("drf: victims for %s/%s: %s", preemptor.namespace, preemptor.name, [t.name for t in victims])
        return victims, interface.PERMIT

    def _queue_order(self, left: queue_info.QueueInfo, right: queue_info.QueueInfo) -> int:
        result = tree.compare_queues(self.root, left.hierarchy, right.hierarchy)
        return 0 if result == 0 else (-1 if result < 0 else 1)

    def _reclaimable(self, ssn: Session, reclaimer: job_info.TaskInfo, reclaimees: list[job_info.TaskInfo]) -> tuple[list[job_info.TaskInfo], int]:
        """On a copy of the tree where the reclaimer's job holds its task, a reclaimee is a victim
        while its queue, even without it, is still ahead of the reclaimer's queue. Each reclaimee is
        weighed on its own. Upstream: the reclaimFn of drf.go with hierarchy enabled."""
        root = self.root.copy()
        total_allocated = dict(self.total_allocated)
        ljob = ssn.jobs[reclaimer.job]
        lqueue = ssn.queues[ljob.queue]
        lattr = tree.Attr(tree.add(dict(self.attrs[ljob.uid].allocated), task_vector(reclaimer)))
        lattr.update(self.total)
        tree.add(total_allocated, task_vector(reclaimer))
        self._update_tree(root, total_allocated, ljob, lattr, lqueue)
        victims = []
        for task in reclaimees:
            rjob = ssn.jobs[task.job]
            rqueue = ssn.queues[rjob.queue]
            rattr = self.attrs[rjob.uid].copy()
            for sign in (-1.0, 1.0):
                # Take the reclaimee out, compare, then put it back for the next one.
                tree.add(total_allocated, task_vector(task), sign)
                tree.add(rattr.allocated, task_vector(task), sign)
                rattr.update(self.total)
                self._update_tree(root, total_allocated, rjob, rattr, rqueue)
                if sign < 0 and tree.compare_queues(root, lqueue.hierarchy, rqueue.hierarchy) < 0:
                    victims.append(task)
        log.debug("hdrf: victims for %s/%s: %s", reclaimer.namespace, reclaimer.name, [t.name for t in victims])
        return victims, interface.PERMIT

    def on_session_close(self, ssn: Session) -> None:
        self.total, self.total_allocated = {}, {}
        self.attrs.clear()
        self.requests.clear()
        self.root = tree.new_root()
