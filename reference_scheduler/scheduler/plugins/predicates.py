"""predicates: the node filters a kubelet-independent scheduler must apply (the resource fit itself
is checked by the allocate action): unschedulable nodes, pod count, nodeSelector and required node
affinity, taints and tolerations, host ports, required inter-pod affinity and anti-affinity
(the pod's own terms and the anti-affinity of pods already placed) and pod topology spread
(topology_spread.py). Reasons are kube-scheduler's.

Arguments switch filters off as upstream's do (`predicate.NodeAffinityEnable`,
`predicate.NodePortsEnable`, `predicate.TaintTolerationEnable`, `predicate.PodAffinityEnable`,
`predicate.PodTopologySpreadEnable`, each true unless given as a YAML false); the unschedulable
node and pod count checks always apply.

A failure is either resolvable by evicting pods (pod count, host ports, anti-affinity, topology
spread skew: kube-scheduler's Unschedulable) or not (the rest: UnschedulableAndUnresolvable);
preempt and reclaim consider only nodes whose failures are all resolvable.

Each check covers every node at once (a `batchPredicate`); what depends only on the pod's spec and
the nodes' labels and taints is computed once per distinct spec per cycle, since a job's pods
share one template.

Upstream: pkg/scheduler/plugins/predicates/predicates.go (which wraps kube-scheduler's filters).
"""

from __future__ import annotations

import collections
import json
from typing import Any, Mapping

import numpy as np

from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import extension_points
from reference_scheduler.scheduler.framework.session import EventHandler, Session
from reference_scheduler.scheduler.plugins import node_fit, topology_spread

NAME = "predicates"
UNSCHEDULABLE = "node(s) were unschedulable"
TOO_MANY_PODS = "Too many pods"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
HOST_PORTS = "node(s) didn't have free ports for the requested pod ports"
POD_AFFINITY = "node(s) didn't match pod affinity rules"
POD_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
SWITCHES = ("NodeAffinity", "NodePorts", "TaintToleration", "PodAffinity", "PodTopologySpread")


def enabled(arguments: Mapping[str, Any]) -> dict[str, bool]:
    """Each filter's switch: on unless its `predicate.<Name>Enable` argument is the YAML false
    (a value of another type is ignored, as upstream's Arguments.GetBool does).
    Upstream: enablePredicate."""
    found = {}
    for name in SWITCHES:
        value = arguments.get(f"predicate.{name}Enable", True)
        found[name] = value if isinstance(value, bool) else True
    return found


def _key(*parts: Any) -> str:
    return json.dumps(parts, sort_keys=True)


class Predicates:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments
        self.enabled = enabled(arguments)

    def on_session_open(self, ssn: Session) -> None:
        on = self.enabled
        nodes = ssn.node_list()
        matrix = ssn.matrix
        labels = [n.labels for n in nodes]
        by_spec: dict[str, list[extension_points.PredicateCheck]] = {}
        # Placed pods with required anti-affinity, kept current as the cycle places and evicts.
        holders: dict[str, job_info.TaskInfo] = {
            t.uid: t for _, t in node_fit.placed_pods(nodes) if node_fit.required_terms(t.pod, "podAntiAffinity")
        }
        # Pods evicted during this cycle (still on their nodes as releasing).
        evicted: set[str] = set()

        def static_checks(pod: Mapping[str, Any]) -> list[extension_points.PredicateCheck]:
            """Unschedulable, node affinity and taints: fixed for the cycle, given the pod's spec."""
            spec = pod.get("spec") or {}
            affinity = (spec.get("affinity") or {}).get("nodeAffinity")
            key = _key(spec.get("nodeSelector"), affinity, spec.get("tolerations"))
            found = by_spec.get(key)
            if found is None:
                tolerations = node_fit.tolerations_of(pod)
                unschedulable = matrix.unschedulable.copy()
                if any(node_fit.tolerates(t, UNSCHEDULABLE_TAINT) for t in tolerations):
                    unschedulable[:] = False
                found = [(unschedulable, UNSCHEDULABLE)]
                if on["NodeAffinity"]:
                    affinity_fails = np.array([not node_fit.node_affinity_ok(pod, labels[i], nodes[i].name) for i in range(len(nodes))], dtype=bool)
                    found.append((affinity_fails, NODE_AFFINITY))
                if on["TaintToleration"]:
                    taint_reasons = np.full(len(nodes), None, dtype=object)
                    for i, node in enumerate(nodes):
                        bad = node_fit.untolerated(tolerations, node.taints, ("NoSchedule", "NoExecute"))
                        if bad:
                            taint_reasons[i] = f"node(s) had untolerated taint {{{bad[0].get('key')}: {bad[0].get('value', '')}}}"
                    found.append((taint_reasons != None, taint_reasons))  # noqa: E711 (element-wise)
                by_spec[key] = found
            return found

        def port_check(pod: Mapping[str, Any]) -> list[extension_points.PredicateCheck]:
            wanted = node_fit.host_ports(pod)
            if not wanted:
                return []
            used = [set().union(*(node_fit.host_ports(t.pod) for t in n.tasks.values())) for n in nodes]
            return [(np.array([node_fit.ports_conflict(wanted, u) for u in used], dtype=bool), HOST_PORTS, True)]

        def inter_pod_checks(task: job_info.TaskInfo) -> list[extension_points.PredicateCheck]:
            checks: list[extension_points.PredicateCheck] = []
            blocked: dict[str, set[str]] = collections.defaultdict(set)
            for holder in holders.values():
                node = ssn.nodes.get(holder.node_name)
                if node is None or holder.uid == task.uid:
                    continue
                for term in node_fit.required_terms(holder.pod, "podAntiAffinity"):
                    key = term.get("topologyKey", "")
                    if key in node.labels and node_fit.term_matches_pod(term, holder.namespace, task.pod):
                        blocked[key].add(node.labels[key])
            if blocked:
                checks.append((np.array([any(node_labels.get(k) in v for k, v in blocked.items()) for node_labels in labels], dtype=bool), EXISTING_ANTI_AFFINITY, True))
            affinity = node_fit.required_terms(task.pod, "podAffinity")
            anti = node_fit.required_terms(task.pod, "podAntiAffinity")
            if not affinity and not anti:
                return checks
            together: collections.Counter[tuple[str, str]] = collections.Counter()
            apart: collections.Counter[tuple[str, str]] = collections.Counter()
            for node, other in node_fit.placed_pods(nodes):
                if other.uid == task.uid or other.uid in evicted:
                    continue
                if affinity and all(node_fit.term_matches_pod(t, task.namespace, other.pod) for t in affinity):
                    for term in affinity:
                        key = term.get("topologyKey", "")
                        if key in node.labels:
                            together[(key, node.labels[key])] += 1
                for term in anti:
                    key = term.get("topologyKey", "")
                    if key in node.labels and node_fit.term_matches_pod(term, task.namespace, other.pod):
                        apart[(key, node.labels[key])] += 1
            if affinity:
                # The first pod of a group whose affinity points at itself may go anywhere the
                # topology labels exist, or it would wait forever.
                first_of_group = not together and all(node_fit.term_matches_pod(t, task.namespace, task.pod) for t in affinity)

                def affinity_ok(node_labels: Mapping[str, str]) -> bool:
                    keys = [t.get("topologyKey", "") for t in affinity]
                    if any(k not in node_labels for k in keys):
                        return False
                    return first_of_group or all(together[(k, node_labels[k])] > 0 for k in keys)

                checks.append((np.array([not affinity_ok(node_labels) for node_labels in labels], dtype=bool), POD_AFFINITY))
            if anti:
                keys = [t.get("topologyKey", "") for t in anti]
                checks.append((np.array([any(k in node_labels and apart[(k, node_labels[k])] > 0 for k in keys) for node_labels in labels], dtype=bool), POD_ANTI_AFFINITY, True))
            return checks

        def spread_checks(task: job_info.TaskInfo) -> list[extension_points.PredicateCheck]:
            verdicts = topology_spread.failures(task, nodes)
            if not any(verdicts):
                return []
            reasons = np.array([v[0] if v else None for v in verdicts], dtype=object)
            resolvable = [v is not None and v[1] for v in verdicts]
            unresolvable = np.array([v is not None and not v[1] for v in verdicts], dtype=bool)
            return [(unresolvable, reasons), (np.array(resolvable, dtype=bool), reasons, True)]

        def batch(task: job_info.TaskInfo) -> list[extension_points.PredicateCheck]:
            static = static_checks(task.pod)
            checks = [static[0], (matrix.pod_count + 1 > matrix.max_pods, TOO_MANY_PODS, True), *static[1:]]
            if on["NodePorts"]:
                checks += port_check(task.pod)
            if on["PodAffinity"] and (holders or node_fit.has_pod_affinity(task.pod)):
                checks += inter_pod_checks(task)
            if on["PodTopologySpread"] and (task.pod.get("spec") or {}).get("topologySpreadConstraints"):
                checks += spread_checks(task)
            return checks

        def placed(task: job_info.TaskInfo) -> None:
            evicted.discard(task.uid)
            if node_fit.required_terms(task.pod, "podAntiAffinity"):
                holders[task.uid] = task

        def removed(task: job_info.TaskInfo) -> None:
            # A pod this cycle evicts no longer counts for inter-pod affinity, as upstream's
            # handler takes it off the node; one already terminating when the cycle began still does.
            holders.pop(task.uid, None)
            if task.status is job_info.TaskStatus.RELEASING:
                evicted.add(task.uid)

        ssn.add_batch_predicate_fn(NAME, batch)
        ssn.event_handlers.append(EventHandler(allocate=placed, deallocate=removed))

    def on_session_close(self, ssn: Session) -> None:
        return None

