"""The supernodes gpu-podaffinity places units in, as rows of the session's node matrix, and the
check that a supernode has room for a group of pods.

A node's supernode is the value of one node label (`devices.vck.io/supernode` by default: the
kit's fake devices advertise the HyperNode of a profile's supernode tier under it; seed 002 names
no label for MetaX's topoDiscovery, so the plugin's argument can point elsewhere). A node
without the label is in no supernode and takes no pod of a unit.

Room is checked as a bin-packing of the group's pods onto the supernode's nodes, largest GPU
request first, each onto the node it leaves least GPU free on (best fit decreasing), against
what each node will have free once its releasing pods are gone, its pod slots and whether it is
cordoned. Other predicates (taints, selectors) are the other plugins' to judge, pod by pod, as
the group is placed: a kit choice that keeps the check cheap.

Upstream: none (a vendor plugin, seed 002_61851c1e6fb0f74a.txt section 7.2.2.2).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from reference_scheduler.scheduler.api import node_matrix
from reference_scheduler.scheduler.framework.session import Session

DEFAULT_LABEL = "devices.vck.io/supernode"


@dataclasses.dataclass(frozen=True)
class Supernodes:
    of_row: np.ndarray  # object per matrix row: the node's supernode, None for none
    rows: dict[str, np.ndarray]  # supernode -> its matrix rows, in row (name) order
    of_node: dict[str, str]  # node name -> supernode
    outside: np.ndarray  # bool per matrix row: the node is in no supernode

    @classmethod
    def build(cls, ssn: Session, label: str) -> Supernodes:
        of_row = np.full(len(ssn.matrix), None, dtype=object)
        of_node: dict[str, str] = {}
        for node in ssn.node_list():
            name = node.labels.get(label)
            if name:
                of_row[ssn.matrix.index[node.name]] = name
                of_node[node.name] = name
        rows = {name: np.flatnonzero(of_row == name) for name in sorted(set(of_node.values()))}
        outside = np.fromiter((name is None for name in of_row), dtype=bool, count=len(of_row))
        return cls(of_row, rows, of_node, outside)

    def mask(self, name: str) -> np.ndarray:
        """True on the rows of nodes in supernode `name`."""
        return np.asarray(self.of_row == name, dtype=bool)


def has_room(matrix: node_matrix.NodeMatrix, rows: np.ndarray, requests: Sequence[node_matrix.Request], gpu: str) -> bool:
    """Can every request be placed at once on the nodes at `rows`?"""
    if not requests:
        return True
    if any(r.unknown for r in requests):
        return False
    free = matrix.future_idle()[rows].copy()
    slots = (matrix.max_pods[rows] - matrix.pod_count[rows]).astype(np.int64)
    open_ = ~matrix.unschedulable[rows]
    column = matrix.column.get(gpu)
    ordered = sorted(requests, key=lambda r: -(r.row[column] if column is not None else 0.0))
    for request in ordered:
        fits = request.fits(free) & (slots > 0) & open_
        candidates = np.flatnonzero(fits)
        if not len(candidates):
            return False
        # Best fit: the node left with the least GPU (first by name among equals).
        left = free[candidates, column] - request.row[column] if column is not None else np.zeros(len(candidates))
        chosen = int(candidates[int(np.argmin(left))])
        free[chosen] -= request.row
        slots[chosen] -= 1
    return True
