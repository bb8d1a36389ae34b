"""gangpreempt and gangreclaim (Volcano v1.15): a starving job takes, all at once, the room for
every pending task it has, evicting whole bundles of victims (bundles.py) inside one domain, and
only when the job's placement then works out.

Per cycle, queues in queue order, each queue's starving jobs in job order, one attempt each:
- the domains: the whole cluster, or for a job with a hard network topology the HyperNodes up to
  its highestTierAllowed whose nodes could hold its minimum, widest first (`maxDomains` of them);
- in each domain, the candidates: Bound or Running preemptable tasks of gang-evictable jobs other
  than the preemptor's, gangpreempt taking from its own queue and strictly lower job priority only,
  gangreclaim from Running tasks of other, reclaimable queues (after the queue's preemptive check
  for all the pending tasks together);
- their bundles, ordered (safe first; gangpreempt: the least important victim job first;
  gangreclaim: the victim queue served last first), narrowed by the plugins' unified evictable
  point and ordered again; whole bundles dropped when `allowWholeBundle` is false;
- bundles are added in order until the domain's idle and releasing resources plus the victims'
  cover the pending tasks; the victims are then evicted and every pending task pipelined on the
  domain's nodes in a trial, kept only when the job is pipelined by it, else the next bundle.

The evictions carry the action's name as their reason (`gangpreempt`, `gangreclaim`).

Upstream: pkg/scheduler/actions/gangpreempt/gangpreempt.go, gangreclaim/gangreclaim.go,
actions/utils (util.go, simulate.go), v1.15. Kit choices: the trial places tasks on the nodes
where they fit the idle resources first, then on those whose resources are being released, in
node score order, and tries a hard-topology job in the whole domain only (upstream also tries the
smaller HyperNodes inside it); sub-groups are not modelled; a job that already has a HyperNode is
not narrowed to it. Not modelled yet: upstream's virtual cluster-wide HyperNode (a hard job allowed
a tier above every HyperNode's, or a cluster without HyperNodes, gets the whole cluster as its
domain there and none here), narrowing to HyperNodes only when network-topology-aware is in the
conf, and that plugin's `hypernode.gradient.evict.max-hypernodes`.
"""

from __future__ import annotations

import functools
import logging

from reference_scheduler.api import resource
from reference_scheduler.scheduler.actions import bundles as bundles_mod
from reference_scheduler.scheduler.actions import victims as victims_mod
from reference_scheduler.scheduler.api import (
    hyper_node_info,
    job_info,
    node_info,
    queue_info,
)
from reference_scheduler.scheduler.framework import extension_points, session_plugins
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.framework.statement import Statement

log = logging.getLogger(__name__)
PREEMPT = "gangpreempt"
RECLAIM = "gangreclaim"
DEFAULT_MAX_DOMAINS = 8
CLUSTER = ""  # the domain of the whole cluster


def gang_evictable(job: job_info.JobInfo) -> bool:
    """A PodGroup that says `volcano.sh/preemptable` (annotation, else label) decides; without it
    the job may lose tasks. Upstream: IsJobPreemptableForGangEviction."""
    meta = job.podgroup.get("metadata") or {}
    for source in (meta.get("annotations") or {}, meta.get("labels") or {}):
        if job_info.PREEMPTABLE_KEY in source:
            # Go's strconv.ParseBool; anything else is not true.
            return str(source[job_info.PREEMPTABLE_KEY]) in ("1", "t", "T", "true", "TRUE", "True")
    return True


class GangEvict:
    """What the two actions share; `kind` says which one runs."""

    NAME = PREEMPT

    def execute(self, ssn: Session) -> None:
        self.max_domains = int(ssn.conf.action_argument(self.NAME, "maxDomains", DEFAULT_MAX_DOMAINS))
        if self.max_domains <= 0:
            self.max_domains = DEFAULT_MAX_DOMAINS
        self.allow_whole = bool(ssn.conf.action_argument(self.NAME, "allowWholeBundle", True))
        task_cmp = functools.cmp_to_key(session_plugins.task_order_key(ssn))
        job_cmp = functools.cmp_to_key(session_plugins.job_order_key(ssn))
        queue_cmp = functools.cmp_to_key(session_plugins.queue_order_key(ssn))
        found = victims_mod.claimants(ssn, task_cmp)
        for queue in sorted(found.queues.values(), key=queue_cmp):
            if self.skips(ssn, queue):
                continue
            for job in sorted(found.starving.get(queue.name, []), key=job_cmp):
                pending = [t for t in found.pending_tasks[job.uid] if not t.resreq.is_empty()]
                if not pending or not self.may_claim(ssn, queue, pending):
                    continue
                stmt = self.evict_for(ssn, queue, job, pending)
                if stmt is not None and session_plugins.job_pipelined(ssn, job):
                    stmt.commit()
                elif stmt is not None:
                    stmt.discard()

    # --- what the two actions do differently ---------------------------------------------------
    def skips(self, ssn: Session, queue: queue_info.QueueInfo) -> bool:
        return False

    def may_claim(self, ssn: Session, queue: queue_info.QueueInfo, pending: list[job_info.TaskInfo]) -> bool:
        return True

    def candidate(self, ssn: Session, job: job_info.JobInfo, task: job_info.TaskInfo, owner: job_info.JobInfo) -> bool:
        raise NotImplementedError

    def precedence(self, ssn: Session, job: job_info.JobInfo) -> bundles_mod.Precedence:
        raise NotImplementedError

    # --- the search --------------------------------------------------------------------------------
    def evict_for(self, ssn: Session, queue: queue_info.QueueInfo, job: job_info.JobInfo, pending: list[job_info.TaskInfo]) -> Statement | None:
        """The statement that evicts the victims and pipelines the job, None when no domain
        gives one."""
        need = job_info.total_request(pending)
        for domain, nodes in self.domains(ssn, job):
            ordered = self.bundles(ssn, job, domain, nodes, need)
            # The domain's idle and releasing resources, plus what the victims so far free.
            room = resource.Resource()
            for node in nodes:
                room.add(node.idle).add(node.releasing)
            victims: list[job_info.TaskInfo] = []
            for bundle in ordered:
                victims.extend(bundle.tasks)
                room.add(bundle.freed)
                if not need.less_equal(room):
                    continue
                stmt = self.trial(ssn, queue, job, pending, nodes, victims)
                if stmt is not None:
                    log.info("%s: job %s takes the room of %d tasks in %s", self.NAME, job.uid, len(victims), domain or "the cluster")
                    return stmt
        return None

    def domains(self, ssn: Session, job: job_info.JobInfo) -> list[tuple[str, list[node_info.NodeInfo]]]:
        """Where the job may take room: the cluster, or for a hard network topology the
        HyperNodes within its highest allowed tier that could hold its minimum, widest first."""
        topology = hyper_node_info.resolved_topology(job, lambda: ssn.hyper_nodes_info)
        if topology is None or not topology.hard:
            return [(CLUSTER, ssn.node_list())]
        tree = ssn.hyper_nodes_info
        minimum = job.min_resources()
        found: list[tuple[str, list[node_info.NodeInfo]]] = []
        for tier in sorted(tree.by_tier, reverse=True):
            if tier > topology.highest_tier_allowed:
                continue
            for name in tree.by_tier[tier]:
                nodes = [ssn.nodes[n] for n in sorted(tree.nodes(name)) if n in ssn.nodes]
                total = resource.Resource()
                for node in nodes:
                    total.add(node.allocatable)
                if nodes and minimum.less_equal(total):
                    found.append((name, nodes))
        return found[: self.max_domains]

    def bundles(self, ssn: Session, job: job_info.JobInfo, domain: str, nodes: list[node_info.NodeInfo], need: resource.Resource) -> list[bundles_mod.Bundle]:
        by_job: dict[str, list[job_info.TaskInfo]] = {}
        for node in nodes:
            for task in node.tasks.values():
                owner = ssn.jobs.get(task.job)
                if owner is None or owner.uid == job.uid or not task.preemptable or not gang_evictable(owner):
                    continue
                if self.candidate(ssn, job, task, owner):
                    by_job.setdefault(owner.uid, []).append(task)
        found = [b for uid, tasks in sorted(by_job.items()) for b in bundles_mod.job_bundles(ssn.jobs[uid], tasks)]
        precedence = self.precedence(ssn, job)
        ordered = bundles_mod.in_order(found, need, precedence)
        context = extension_points.EvictionContext(self.NAME, job, domain)
        allowed = session_plugins.unified_evictable(ssn, context, [t for b in ordered for t in b.tasks])
        kept = bundles_mod.in_order(bundles_mod.allowed_only(ordered, {t.uid for t in allowed}), need, precedence)
        return [b for b in kept if b.safe or self.allow_whole]

    def trial(self, ssn: Session, queue: queue_info.QueueInfo, job: job_info.JobInfo, pending: list[job_info.TaskInfo], nodes: list[node_info.NodeInfo], victims: list[job_info.TaskInfo]) -> Statement | None:
        """Evict the victims and pipeline every pending task on the domain's nodes; the
        statement when the job is then pipelined, else everything undone and None."""
        stmt = Statement(ssn)
        for victim in victims:
            stmt.evict(victim, self.NAME)
        inside = {node.name for node in nodes}
        for task in pending:
            node = self.node_for(ssn, queue, task, inside)
            if node is None:
                stmt.discard()
                return None
            stmt.pipeline(task, node)
        if not session_plugins.job_pipelined(ssn, job):
            stmt.discard()
            return None
        return stmt

    def node_for(self, ssn: Session, queue: queue_info.QueueInfo, task: job_info.TaskInfo, inside: set[str]) -> node_info.NodeInfo | None:
        if not session_plugins.allocatable(ssn, queue, task):
            return None
        nodes = [n for n in victims_mod.candidate_nodes(ssn, task) if n.name in inside]
        # A node with room now first, then one whose room is being released.
        now = next((n for n in nodes if task.resreq.less_equal(n.idle.sub(n.pipelined))), None)
        return now or next((n for n in nodes if task.resreq.less_equal(n.future_idle())), None)


class GangPreempt(GangEvict):
    NAME = PREEMPT

    def candidate(self, ssn: Session, job: job_info.JobInfo, task: job_info.TaskInfo, owner: job_info.JobInfo) -> bool:
        return task.status in job_info.PREEMPTABLE and owner.queue == job.queue and owner.priority < job.priority

    def precedence(self, ssn: Session, job: job_info.JobInfo) -> bundles_mod.Precedence:
        job_cmp = session_plugins.job_order_key(ssn)

        def reverse_job_order(left: bundles_mod.Bundle, right: bundles_mod.Bundle) -> int:
            # The job the scheduler would serve last loses its tasks first.
            return 0 if left.job.uid == right.job.uid else -job_cmp(left.job, right.job)

        return reverse_job_order


class GangReclaim(GangEvict):
    NAME = RECLAIM

    def skips(self, ssn: Session, queue: queue_info.QueueInfo) -> bool:
        return session_plugins.overused(ssn, queue)

    def may_claim(self, ssn: Session, queue: queue_info.QueueInfo, pending: list[job_info.TaskInfo]) -> bool:
        return session_plugins.preemptive(ssn, queue, pending)

    def candidate(self, ssn: Session, job: job_info.JobInfo, task: job_info.TaskInfo, owner: job_info.JobInfo) -> bool:
        theirs = ssn.queues.get(owner.queue)
        return task.status is job_info.TaskStatus.RUNNING and owner.queue != job.queue and theirs is not None and theirs.reclaimable

    def precedence(self, ssn: Session, job: job_info.JobInfo) -> bundles_mod.Precedence:
        mine = ssn.queues[job.queue]

        def victim_queue_order(left: bundles_mod.Bundle, right: bundles_mod.Bundle) -> int:
            # Without a plugin's say, the queue the scheduler would serve last gives first.
            if left.job.queue == right.job.queue:
                return 0
            return session_plugins.victim_queue_first(ssn, ssn.queues[left.job.queue], ssn.queues[right.job.queue], mine)

        return victim_queue_order
