"""network-topology-aware: for a job with a network topology (hard or soft), score nodes by how
close they sit in the HyperNode tree to where the job's tasks already are, so its tasks gather
under as low a HyperNode as they can.

The task carries the HyperNode its job's placed tasks sit under (allocate hands it over, see
TaskInfo.job_allocated_hypernode). A node whose lowest-tier HyperNode is that one scores 100;
any other node 100 x (maxTier - tier of their least common ancestor) / (maxTier - minTier), 0
without a common ancestor or with a single tier; times the `weight` argument (default 1). When
several nodes share the top score, each also gets 100 x (the job's tasks in the node's HyperNode) /
(the job's tasks), times the weight, so the tasks follow the HyperNode that already holds most of
them. A job's first task (nothing placed yet) and jobs without a topology are not scored.

Upstream compares the nodes that passed the predicates; the kit scores every node at once and
finds the top score among all of them. The two agree: every node at the top score lies under the
HyperNode the job's tasks are in, so when all of those are full the candidates left hold none of
the job's tasks and the extra score is 0 for each of them anyway.

Confining a hard-topology job to one HyperNode is allocate's work, not this plugin's, except for
jobs with sub-jobs (a PodGroup's subGroupPolicy, v1.14): as from v1.14 upstream, their HyperNodes
are searched only when this plugin is on, and it ranks the HyperNodes a sub-job fits in by
HyperNode binpack (`sub_job_hypernode_scores`): for cpu and memory, the mean of (what the
HyperNode's nodes hold + what the sub-job asks) / their allocatable, 0 when it overflows; among
the HyperNodes sharing the top score, plus the share of the sub-job's tasks already there; times
100 and the weight. Upstream: HyperNodeOrderFn, getSubJobHyperNodeBinPackingScore.

Upstream: pkg/scheduler/plugins/network-topology-aware/network_topology_aware.go.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

import numpy as np

from reference_scheduler.scheduler.api import hyper_node_info, job_info, sub_job_info
from reference_scheduler.scheduler.framework.session import Session

log = logging.getLogger(__name__)
NAME = "network-topology-aware"
BASE_SCORE = 100.0


def _weight(arguments: Mapping[str, Any]) -> int:
    value = arguments.get("weight", 1)
    try:
        return int(value)
    except (TypeError, ValueError):
        log.warning("%s: weight=%r is not an integer; using 1", NAME, value)
        return 1


BINPACK_RESOURCES = ("cpu", "memory")


def tier_score(tree: hyper_node_info.HyperNodesInfo, hypernode: str, allocated: str) -> float:
    """How close a node's HyperNode is to the job's, 0..100. Upstream: networkTopologyAwareScore."""
    if hypernode == allocated:
        return BASE_SCORE
    common = tree.lca(hypernode, allocated)
    if common not in tree or not tree.tiers:
        return 0.0
    lowest, highest = tree.tiers[0], tree.tiers[-1]
    if lowest == highest:
        return 0.0
    return BASE_SCORE * (highest - tree.tier(common)) / (highest - lowest)


class NetworkTopologyAware:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.weight = _weight(arguments)
        # Each node's lowest-tier HyperNode, by matrix row, once a task needs it.
        self._row_hypernodes: np.ndarray | None = None

    def on_session_open(self, ssn: Session) -> None:
        ssn.add_batch_node_order_fn(NAME, lambda task: self.scores(ssn, task))
        ssn.add_sub_job_hyper_node_order_fn(NAME, lambda sub, candidates: self.sub_job_hypernode_scores(ssn, sub, candidates))

    def on_session_close(self, ssn: Session) -> None:
        return None

    def row_hypernodes(self, ssn: Session) -> np.ndarray:
        if self._row_hypernodes is None:
            tree = ssn.hyper_nodes_info
            self._row_hypernodes = np.array([tree.hypernode_of_node(n) for n in ssn.matrix.names], dtype=object)
        return self._row_hypernodes

    def scores(self, ssn: Session, task: job_info.TaskInfo) -> np.ndarray:
        out = np.zeros(len(ssn.matrix))
        job = ssn.jobs.get(task.job)
        allocated = task.job_allocated_hypernode
        # allocate hands over a HyperNode only for a job or sub-job with a topology.
        if job is None or not allocated:
            return out
        tree = ssn.hyper_nodes_info
        rows = self.row_hypernodes(ssn)
        for hypernode in set(rows.tolist()):
            out[rows == hypernode] = tier_score(tree, hypernode, allocated) * self.weight
        top = out == out.max()
        if np.count_nonzero(top) > 1 and job.tasks:
            for hypernode in set(rows[top].tolist()):
                share = tree.task_count(hypernode, job) / len(job.tasks) if hypernode else 0.0
                out[top & (rows == hypernode)] += BASE_SCORE * share * self.weight
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s: task %s under %s: scores %s", NAME, task.name, allocated, dict(zip(ssn.matrix.names, out.tolist(), strict=True)))
        return out

    def sub_job_hypernode_scores(self, ssn: Session, sub: sub_job_info.SubJob, candidates: Mapping[str, frozenset[str]]) -> dict[str, float]:
        """Each candidate HyperNode's score for the sub-job (candidates: HyperNode -> its nodes)."""
        request = job_info.total_request(sub.tasks)
        asked = [name for name in BINPACK_RESOURCES if request.get(name) > 0]
        scores: dict[str, float] = {}
        for name, nodes in candidates.items():
            members = [ssn.nodes[n] for n in nodes if n in ssn.nodes]
            ratios: list[float] = []
            for resource_name in asked:
                allocatable = sum(node.allocatable.get(resource_name) for node in members)
                used = sum(node.used.get(resource_name) for node in members)
                if used + request.get(resource_name) > allocatable:
                    ratios = []
                    break
                ratios.append((used + request.get(resource_name)) / allocatable)
            scores[name] = sum(ratios) / len(ratios) if ratios else 0.0
        top = max(scores.values(), default=0.0)
        tied = [name for name, score in scores.items() if score == top]
        if len(tied) > 1:
            for name in tied:
                inside = sum(1 for task in sub.tasks if task.node_name and task.node_name in candidates[name])
                scores[name] += inside / len(sub.tasks) if sub.tasks else 1.0
        return {name: BASE_SCORE * self.weight * score for name, score in scores.items()}
