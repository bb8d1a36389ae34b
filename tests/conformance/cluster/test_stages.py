"""Golden tests of the kit's kwok pod stages, run on a real embedded cluster.

Each `<case>.input.yaml` in conformance/cluster/stages/testdata holds a pod and steps (wait for a
state, delete); the test drives them while watching the pod, and compares the phases it went
through and its last status with `<case>.output.yaml`. Times and IPs become placeholders.
`pytest tests/conformance/cluster/test_stages.py --update-golden` rewrites the outputs.
"""

from __future__ import annotations

import calendar
import copy
import re
import time
from typing import Any

import kubernetes
import pytest
import yaml

from conformance.cluster import embedded

TESTDATA = embedded.STAGES_DIR / "testdata"
CASES = sorted(p.name[: -len(".input.yaml")] for p in TESTDATA.glob("*.input.yaml"))
CASE_TIMEOUT_S = 60.0
_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
_IP_KEYS = {"podIP", "hostIP", "ip"}

pytestmark = pytest.mark.cluster


def _normalize(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _normalize(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalize(v, key) for v in value]
    if isinstance(value, str) and _TIME.match(value):
        return "<time>"
    if key in _IP_KEYS and isinstance(value, str):
        return "<ip>"
    return value


def _reached(state: str, pod: dict[str, Any] | None) -> bool:
    if state == "gone":
        return pod is None
    if pod is None:
        return False
    if state == "terminating":
        return bool(pod["metadata"].get("deletionTimestamp"))
    if state == "restarted":
        statuses = pod.get("status", {}).get("containerStatuses") or []
        return bool(statuses) and statuses[0].get("restartCount", 0) >= 1
    return pod.get("status", {}).get("phase") == state


def run_case(api: kubernetes.client.ApiClient, namespace: str, node: str, case: dict[str, Any]) -> dict[str, Any]:
    """Create the case's pod and follow its steps on one watch; return what was observed."""
    core = kubernetes.client.CoreV1Api(api)
    manifest = copy.deepcopy(case["pod"])
    manifest.update(apiVersion="v1", kind="Pod")
    manifest["spec"]["nodeName"] = node
    name = manifest["metadata"]["name"]
    selector = f"metadata.name={name}"
    version = core.list_namespaced_pod(namespace, field_selector=selector).metadata.resource_version
    core.create_namespaced_pod(namespace, manifest)
    steps = list(case["steps"])
    phases: list[str] = []
    pod: dict[str, Any] | None = None
    last: dict[str, Any] = {}
    deadline = time.monotonic() + CASE_TIMEOUT_S
    reached_at: dict[str, float] = {}

    def advance() -> None:
        while steps:
            step = steps[0]
            if "delete" in step:
                core.delete_namespaced_pod(name, namespace)
            elif not _reached(step["wait"], pod):
                return
            else:
                reached_at[step["wait"]] = time.monotonic()
            steps.pop(0)

    advance()
    while steps:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"case timed out at step {steps[0]}; phases seen {phases}"
        watcher = kubernetes.watch.Watch()
        for event in watcher.stream(core.list_namespaced_pod, namespace, field_selector=selector, resource_version=version, timeout_seconds=max(1, int(remaining))):
            obj = event["raw_object"]
            version = obj["metadata"]["resourceVersion"]
            pod = None if event["type"] == "DELETED" else obj
            last = obj
            phase = obj.get("status", {}).get("phase")
            if phase and (not phases or phases[-1] != phase):
                phases.append(phase)
            advance()
            if not steps:
                watcher.stop()
                break
    return {"phases": phases, "gone": pod is None, "status": last.get("status", {}), "reached_at": reached_at}


@pytest.mark.parametrize("case_name", CASES)
def test_stage_golden(case_name: str, vck_api: kubernetes.client.ApiClient, vck_namespace: str, request: pytest.FixtureRequest) -> None:
    case = yaml.safe_load((TESTDATA / f"{case_name}.input.yaml").read_text())
    node = kubernetes.client.CoreV1Api(vck_api).list_node().items[0].metadata.name
    observed = run_case(vck_api, vck_namespace, node, case)
    got = _normalize({k: v for k, v in observed.items() if k != "reached_at"})
    golden = TESTDATA / f"{case_name}.output.yaml"
    if request.config.getoption("--update-golden"):
        golden.write_text(yaml.safe_dump(got, sort_keys=True))
    assert golden.exists(), f"{golden} is missing: run pytest {__file__} --update-golden and review it"
    assert got == yaml.safe_load(golden.read_text())
    if case_name == "succeed-after":
        status = observed["status"]["containerStatuses"][0]["state"]["terminated"]
        ran = _epoch(status["finishedAt"]) - _epoch(status["startedAt"])
        assert ran >= 2, f"the container ran {ran}s, less than the 2s it was annotated with"
    if case_name == "delete-after":
        # A lower bound only: a slow machine can make it longer, never shorter.
        held = observed["reached_at"]["gone"] - observed["reached_at"]["terminating"]
        assert held >= 1.0, f"the pod was gone {held:.2f}s after deletion, despite terminate-after: 2s"


def _epoch(stamp: str) -> int:
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def test_every_stage_has_a_golden_case() -> None:
    stage_names = {doc["metadata"]["name"] for doc in embedded.stage_documents()}
    covered = set()
    for case_name in CASES:
        covered |= set(yaml.safe_load((TESTDATA / f"{case_name}.input.yaml").read_text())["stages"])
        assert (TESTDATA / f"{case_name}.output.yaml").exists(), f"{case_name} has no golden output"
    assert stage_names <= covered, f"stages without a golden case: {sorted(stage_names - covered)}"
