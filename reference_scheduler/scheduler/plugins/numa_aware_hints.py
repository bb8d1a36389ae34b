"""The numa-aware plugin's judgement of one pod on one node, as the kubelet's topology manager and
static CPU manager would make it: NUMA hints for each container's exclusive CPUs, the node's
topology policy choosing the best hint and admitting it or not, and the CPUs taken for it.

- Hints: every set of NUMA nodes (a bitmask) whose free CPUs can hold the container's whole-CPU
  request; a hint is *preferred* when it has as few NUMA nodes as the smallest set whose CPUs
  (free or not) could ever hold the request. A container with no whole-CPU request has no
  preference.
- Best hint: preferred over not preferred, then the narrowest (fewest NUMA nodes, then the lower
  mask), the first found among equals; when nothing fits, all NUMA nodes, not preferred.
- Policies: `best-effort` admits the best hint whatever it is; `restricted` admits it only when
  preferred; `single-numa-node` keeps only preferred one-NUMA-node hints (or no preference) and
  admits only a preferred result; `none` (or a policy it does not know) admits with no affinity.
- CPUs taken: from the best hint's NUMA nodes first, the rest from anywhere; inside a set, whole
  sockets, then whole cores (packing the fullest socket first), then single CPUs next to those
  already taken. The reserved CPUs (the node's reservation rounded up, taken the same way from all
  CPUs) are never handed out.

Upstream: pkg/scheduler/plugins/numaaware/policy/ (policy.go, policy_best_effort.go,
policy_restricted.go, policy_single_numa_node.go, policy_none.go, factory.go) and
provider/cpumanager/ (cpu_mng.go, cpu_assignment.go), which follow the kubelet's topology and CPU
managers. Upstream's copy of the CPU picking sorts sockets with a comparator that is not a strict
order (its result can vary between runs); the kit sorts by the documented keys. Which CPUs inside
the chosen NUMA nodes are taken is never judged by a scenario.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Mapping, Sequence

from reference_scheduler.scheduler.plugins import numa_aware_topology as topology

NONE = "none"
BEST_EFFORT = "best-effort"
RESTRICTED = "restricted"
SINGLE_NUMA_NODE = "single-numa-node"


@dataclasses.dataclass(frozen=True)
class Hint:
    mask: int | None  # bit i set: NUMA node i; None: any NUMA node
    preferred: bool


@dataclasses.dataclass(frozen=True)
class Verdict:
    """A pod on a node: the CPUs its containers would get, or the container refused."""

    cpus: frozenset[int] = frozenset()
    refused: str = ""  # the name of the first container the policy did not admit


def mask_of(numa_nodes: Sequence[int]) -> int:
    return sum(1 << n for n in set(numa_nodes))


def bits(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def narrower(left: int, right: int) -> bool:
    """Fewer NUMA nodes, or as many and the lower-numbered ones."""
    lc, rc = bin(left).count("1"), bin(right).count("1")
    return lc < rc or (lc == rc and left < right)


def cpu_hints(topo: topology.NodeTopology, free: frozenset[int], request: int) -> list[Hint]:
    """Every NUMA node set whose free CPUs hold `request`, smallest sets first."""
    numa_nodes = topo.numa_nodes()
    smallest = len(numa_nodes)
    fitting: list[int] = []
    for size in range(1, len(numa_nodes) + 1):
        for combo in itertools.combinations(numa_nodes, size):
            inside = topo.cpus_in(combo)
            if len(inside) >= request:
                smallest = min(smallest, size)
            if len(free & inside) >= request:
                fitting.append(mask_of(combo))
    return [Hint(mask, bin(mask).count("1") == smallest) for mask in fitting]


def _best(all_numa: int, per_resource: list[list[Hint]]) -> Hint:
    """One hint per resource, every combination merged (their NUMA nodes in common, preferred if
    all are); the best merge wins. Only cpu has hints here, so each combination is one hint.
    Upstream: mergeFilteredHints in policy/policy.go."""
    best = Hint(all_numa, False)
    for permutation in itertools.product(*per_resource):
        merged_mask = all_numa
        for hint in permutation:
            merged_mask &= all_numa if hint.mask is None else hint.mask
        merged = Hint(merged_mask, all(h.preferred for h in permutation))
        if merged_mask == 0 or (best.preferred and not merged.preferred):
            continue
        if (merged.preferred and not best.preferred) or narrower(merged_mask, best.mask or 0):
            best = merged
    return best


def judge(policy: str, numa_nodes: Sequence[int], hints: list[Hint] | None) -> tuple[Hint, bool]:
    """The best hint under the node's topology policy, and whether the policy admits it. `hints`
    None: the container has no preference; []: nothing fits anywhere."""
    if policy not in (BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE):
        return Hint(None, False), True
    per_resource = [[Hint(None, True)] if hints is None else (hints or [Hint(None, False)])]
    if policy == SINGLE_NUMA_NODE:
        per_resource = [[h for h in group if h.preferred and (h.mask is None or bin(h.mask).count("1") == 1)] for group in per_resource]
    best = _best(mask_of(numa_nodes), per_resource)
    return best, policy == BEST_EFFORT or best.preferred


def take_by_topology(topo: topology.NodeTopology, available: frozenset[int], count: int) -> frozenset[int] | None:
    """`count` CPUs out of `available`, packed by socket and core; None when there are too few."""
    if count <= 0:
        return frozenset()
    if count > len(available):
        return None
    sockets: dict[int, set[int]] = {}
    cores: dict[tuple[int, int], set[int]] = {}
    for cpu, info in topo.cpus.items():
        sockets.setdefault(info.socket, set()).add(cpu)
        cores.setdefault((info.socket, info.core), set()).add(cpu)
    per_socket = len(topo.cpus) // max(1, len(sockets))
    per_core = len(topo.cpus) // max(1, len(cores))
    free, taken = set(available), set()

    def take(cpus: set[int]) -> None:
        taken.update(cpus)
        free.difference_update(cpus)

    for socket in sorted(sockets):
        if per_socket and count - len(taken) >= per_socket and sockets[socket] <= free:
            take(sockets[socket])
    by_fullness = sorted(cores, key=lambda key: (len(sockets[key[0]] & free), key))
    for key in by_fullness:
        if per_core and count - len(taken) >= per_core and cores[key] <= free:
            take(cores[key])
    while len(taken) < count:
        cpu = min(free, key=lambda c: _single_cpu_key(topo.cpus[c], c, sockets, cores, free, taken))
        take({cpu})
    return frozenset(taken)


def _single_cpu_key(info: topology.CpuInfo, cpu: int, sockets: Mapping[int, set[int]], cores: Mapping[tuple[int, int], set[int]], free: set[int], taken: set[int]) -> tuple[int, ...]:
    # Next to what is already taken, then where fewest CPUs are left free (packing), then by id.
    socket, core = sockets[info.socket], cores[(info.socket, info.core)]
    return (-len(socket & taken), len(socket & free), len(core & free), info.socket, info.core, cpu)


def reserved(topo: topology.NodeTopology) -> frozenset[int]:
    return take_by_topology(topo, frozenset(topo.cpus), min(topo.reserved_cpus, len(topo.cpus))) or frozenset()


def allocate(topo: topology.NodeTopology, hint: Hint, available: frozenset[int], request: int) -> frozenset[int]:
    """The CPUs a container gets: inside the hint's NUMA nodes as far as they go, then anywhere.
    Empty when the CPUs cannot be found (upstream gives no CPUs rather than some)."""
    result: frozenset[int] = frozenset()
    if hint.mask is not None:
        aligned = available & topo.cpus_in(bits(hint.mask))
        inside = take_by_topology(topo, aligned, min(request, len(aligned)))
        if inside is None:
            return frozenset()
        result = inside
    rest = take_by_topology(topo, available - result, request - len(result))
    return frozenset() if rest is None else result | rest


def judge_pod(topo: topology.NodeTopology, policy: str, available: frozenset[int] | None, pod: Mapping[str, Any]) -> Verdict:
    """Each container in turn, each seeing the CPUs the ones before it took. `available`: the
    node's free CPUs less the reserved ones; None when its Numatopology lists no CPUs at all (no
    container then has a preference). Upstream: the predicate of
    pkg/scheduler/plugins/numaaware/numaaware.go."""
    left = available or frozenset()
    numa_nodes = topo.numa_nodes()
    taken: frozenset[int] = frozenset()
    for container in (pod.get("spec") or {}).get("containers") or []:
        request = topology.exclusive_cpus(container)
        hints = cpu_hints(topo, left, request) if request and available is not None else None
        best, admitted = judge(policy, numa_nodes, hints)
        if not admitted:
            return Verdict(refused=str(container.get("name", "")))
        cpus = allocate(topo, best, left, request)
        taken |= cpus
        left -= cpus
    return Verdict(cpus=taken)
