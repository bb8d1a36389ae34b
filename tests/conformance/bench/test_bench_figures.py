"""The bench's parts that need no cluster: reading the API server's audit log, the workload's
requests, naming components, and the figures, text and chart made from a run."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
import sys

from conformance.bench import audit, figures, render, scheduler, usage, workload

NS = "vck-bench-abc"


def event(verb: str, resource: str, name: str, stamp: str, code: int = 201, sub: str | None = None, namespace: str = NS, agent: str = "vc-scheduler/v1.13.3 (linux/amd64)") -> bytes:
    ref = {"resource": resource, "namespace": namespace, "name": name}
    if sub:
        ref["subresource"] = sub
    line = {"verb": verb, "objectRef": ref, "userAgent": agent, "responseStatus": {"code": code}, "stageTimestamp": stamp}
    return json.dumps(line).encode() + b"\n"


def test_binds_creates_and_writes_come_from_the_audit_log(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "audit.log"
    path.write_bytes(
        event("create", "pods", "pg-0-0", "2026-01-01T00:00:01.000000Z")
        # client-go's pods/binding and the official Python client's bindings collection are both binds
        + event("create", "pods", "pg-0-0", "2026-01-01T00:00:02.500000Z", sub="binding")
        + event("create", "bindings", "pg-0-1", "2026-01-01T00:00:03.000000Z", agent="reference_scheduler.scheduler/v0 (python)")
        # a refused bind, another namespace's bind and a status patch are not binds of the workload
        + event("create", "pods", "pg-0-2", "2026-01-01T00:00:03.500000Z", code=409, sub="binding")
        + event("create", "pods", "other", "2026-01-01T00:00:04.000000Z", sub="binding", namespace="elsewhere")
        + event("patch", "podgroups", "pg-0", "2026-01-01T00:00:05.000000Z", code=200, sub="status")
    )
    log = audit.Log(path, NS)
    assert log.read() == 6
    assert log.bound_at == {"pg-0-0": 1767225602.5, "pg-0-1": 1767225603.0}
    assert log.created_at == {("pods", "pg-0-0"): 1767225601.0}
    writes = log.writes(1767225602.0, 1767225605.0)
    assert writes[audit.Write("vc-scheduler", "create", "pods/binding")] == 2  # this namespace's and the other's
    assert writes[audit.Write("reference_scheduler.scheduler", "create", "bindings")] == 1
    assert writes[audit.Write("vc-scheduler", "patch", "podgroups/status")] == 1
    assert audit.Write("vc-scheduler", "create", "pods") not in writes  # before the window


def test_a_line_still_being_written_is_read_once_it_is_whole(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "audit.log"
    line = event("create", "bindings", "pg-1-0", "2026-01-01T00:00:01.000000Z")
    path.write_bytes(line[:40])
    log = audit.Log(path, NS)
    assert log.read() == 0 and log.bound_at == {}
    with open(path, "ab") as out:
        out.write(line[40:])
    assert log.read() == 1 and list(log.bound_at) == ["pg-1-0"]


def test_the_log_is_followed_across_the_api_servers_rotations(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "audit.log"
    path.write_bytes(event("create", "bindings", "pg-0-0", "2026-01-01T00:00:01.000000Z"))
    log = audit.Log(path, NS)
    assert log.read() == 1
    # More lines, then the API server renames the file and starts a new one.
    with open(path, "ab") as out:
        out.write(event("create", "bindings", "pg-0-1", "2026-01-01T00:00:02.000000Z"))
    path.rename(tmp_path / "audit-2026-01-01T00-00-02.500.log")
    path.write_bytes(event("create", "bindings", "pg-0-2", "2026-01-01T00:00:03.000000Z"))
    assert log.read() == 2 and set(log.bound_at) == {"pg-0-0", "pg-0-1", "pg-0-2"}
    log.close()
    # A log first read after rotations starts from the oldest rotated file.
    late = audit.Log(path, NS)
    assert late.read() == 3 and set(late.bound_at) == {"pg-0-0", "pg-0-1", "pg-0-2"}
    late.close()


def test_the_workload_names_its_gangs_and_creates_each_group_before_its_pods() -> None:
    shape = workload.Shape(pods=6, gang=3, namespace=NS)
    requests = workload.creates(shape)
    paths = [r.path for r in requests]
    assert paths[0] == f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{NS}/podgroups"
    assert paths[1:4] == [f"/api/v1/namespaces/{NS}/pods"] * 3
    assert [r.group for r in requests] == [0, 0, 0, 0, 1, 1, 1, 1]
    pod = json.loads(requests[1].body or b"{}")
    assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "pg-0" and pod["spec"]["schedulerName"] == "volcano"
    jobs = workload.Shape(pods=6, gang=3, namespace=NS, kind=workload.JOBS)
    job = json.loads(workload.creates(jobs)[1].body or b"{}")
    assert job["metadata"]["name"] == "j-1" and job["spec"]["minAvailable"] == 3 and job["spec"]["tasks"][0]["replicas"] == 3
    assert {workload.gang_of(p) for p in jobs.pod_names(1)} == {"j-1-t"}
    assert {workload.gang_of(p) for p in shape.pod_names(1)} == {"pg-1"}
    binds = workload.binds(shape, ["n0", "n1"])
    assert [json.loads(b.body or b"{}")["target"]["name"] for b in binds] == ["n0", "n1", "n0", "n1", "n0", "n1"]


def test_processes_are_named_by_the_component_they_run() -> None:
    assert usage.role(("/usr/bin/python3", "-m", "reference_scheduler.scheduler", "--kubeconfig", "k")) == "scheduler"
    assert usage.role(("/bin/vc-controller-manager", "--kubeconfig", "k")) == "controller"
    assert usage.role(("/x/bin/kube-apiserver", "--etcd-prefix=/registry")) == "kube-apiserver"
    # A chaos supervisor names the scheduler it runs on its own command line too.
    assert usage.role(("python3", "-m", "conformance.impl.chaos", "--", "python3", "-m", "reference_scheduler.scheduler")) == "chaos supervisor"


def sample_report() -> figures.Report:
    window = figures.Window(100.0, 104.0, (1.0, 0.5, 0.25), (1.5, 0.6, 0.3))
    ceiling = figures.Ceiling(pods=4, creates_per_s=400.0, binds_per_s=200.0, failed=0, bind_times_s=(0.01, 0.02, 0.03, 0.04), components=(usage.Usage("kube-apiserver", 1.5, 300 * 2**20, 290 * 2**20),), window=window)
    done = figures.Run(
        impl="reference", mode="scheduler-only", pods=4, gang=2, bound=4, seconds=2.0, bind_s=(1.0, 1.5, 1.8, 2.0), gang_s=(1.5, 2.0),
        bound_times_s=(1.0, 1.5, 1.8, 2.0), partial_gangs=0, create_s=0.1,
        components=(usage.Usage("scheduler", 0.8, 100 * 2**20, 90 * 2**20), usage.Usage("kube-apiserver", 1.0, 320 * 2**20, 300 * 2**20)),
        writes=((audit.Write("reference_scheduler.scheduler", "create", "pods/binding"), 4),), window=window,
    )
    idle = figures.Run(
        impl="reference:broken=allocate", mode="scheduler-only", pods=4, gang=2, bound=0, seconds=0.0, bind_s=(), gang_s=(), bound_times_s=(),
        partial_gangs=0, create_s=0.1, components=(), writes=(), window=window, problem="only 0 of 4 pods were bound within the deadline",
    )
    return figures.Report(nodes=2, pods=4, gang=2, mode="scheduler-only", workload="podgroups", rate=None, ceilings=(ceiling,), runs=(done, idle))


def test_figures_compare_each_run_with_the_ceiling_and_with_each_other() -> None:
    report = sample_report()
    done, idle = report.runs
    assert done.complete and done.binds_per_s == 2.0 and done.ratio(report.ceiling_of(done)) == 0.01
    assert not idle.complete and idle.binds_per_s == 0.0 and not report.complete
    assert figures.percentile([3.0, 1.0], 50) is not None and figures.percentile([], 99) is None
    data = figures.to_json(report)
    assert data["schema"] == figures.SCHEMA and data["complete"] is False
    assert data["runs"][0]["gang_s"] == {"p50": 1.75, "p99": 1.995, "complete": 2, "partial": 0}
    assert data["runs"][0]["components"]["scheduler"] == {"cpu_s": 0.8, "rss_peak_mib": 100.0, "rss_end_mib": 90.0}
    assert data["runs"][1]["problem"].startswith("only 0 of 4")
    assert data["summary"]["reference"] == {"median_binds_per_s": 2.0, "median_ratio_to_ceiling": 0.01, "rounds": 1}
    assert data["vs"] is None  # the second binds nothing: no ratio
    json.dumps(data)  # plain data all through


def test_rounds_are_summed_up_by_their_medians_each_against_its_own_ceiling() -> None:
    report = sample_report()
    done = report.runs[0]
    faster = dataclasses.replace(done, seconds=1.0, round=1)
    slower = dataclasses.replace(done, seconds=4.0, round=2)
    ceilings = (*report.ceilings, dataclasses.replace(report.ceilings[0], binds_per_s=100.0), report.ceilings[0])
    rounds = dataclasses.replace(report, ceilings=ceilings, runs=(done, faster, slower))
    # binds/s 2, 4 and 1 against ceilings of 200, 100 and 200
    assert rounds.median_binds_per_s("reference") == 2.0 and rounds.median_ratio("reference") == 0.01
    other = dataclasses.replace(done, impl="volcano", seconds=4.0)
    versus = dataclasses.replace(report, runs=(done, other))
    assert figures.to_json(versus)["vs"] == 2.0
    text = render.text(rounds)
    assert "reference #2" in text and "ceiling (no scheduler, round 3)" in text and "reference: median 2.0 binds/s, 0.01 x" in text
    assert "reference / volcano: 2.00 x the binds/s" in render.text(versus)


def test_text_and_page_show_every_run() -> None:
    report = sample_report()
    text = render.text(report)
    assert "ceiling (no scheduler): 400.0 creates/s, 200.0 binds/s" in text
    row = next(line for line in text.splitlines() if line.startswith("reference "))
    assert row.split()[1:4] == ["4/4", "2.0", "0.01"]
    assert "reference:broken=allocate: only 0 of 4 pods" in text
    assert "0.8/100" in text  # the scheduler's CPU seconds and peak MiB
    page = render.page(report)
    assert page.count("<polyline") == 3  # the ceiling's binds and both runs (one of them empty)
    assert "reference:broken=allocate" in page


def test_the_bench_refuses_what_it_cannot_run_before_starting_anything(tmp_path: pathlib.Path) -> None:
    assert scheduler.BenchConfig(pods=10, gang=4).validate() == ["--pods 10 is not a multiple of --gang 4"]
    assert "use --mode end-to-end" in " ".join(scheduler.BenchConfig(workload="jobs").validate())
    assert scheduler.BenchConfig(mode="end-to-end").kind == workload.JOBS and scheduler.BenchConfig().kind == workload.PODS
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "bench", "scheduler", "--nodes", "1", "--pods", "10", "--gang", "4", "--out", "-"],
        env={**os.environ, "VCK_STATE_DIR": str(tmp_path / "state")}, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2 and "not a multiple of --gang 4" in proc.stderr
    assert not (tmp_path / "state").exists(), "nothing was started"
