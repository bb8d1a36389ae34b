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

Confining a hard-topology job to one HyperNode is allocate's work, not this plugin's.

Upstream: pkg/scheduler/plugins/network-topology-aware/network_topology_aware.go.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

import numpy as np

from reference_scheduler.scheduler.api import hyper_node_info, job_info
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
        if job is None or not allocated or hyper_node_info.network_topology(job) is None:
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
