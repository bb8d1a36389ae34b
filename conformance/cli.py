"""`vck`: the command line. It only parses flags, calls `conformance.api` with a config object and
prints what comes back (sonobuoy's shape: one library, a config per operation, a thin CLI)."""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time
from typing import Any, Sequence

import pytest

from conformance import api, interrupts, parallel, results, scaffold
from conformance import config as run_config
from conformance.bench import render as bench_render
from conformance.bench import scheduler as bench
from conformance.cluster import base, nodes, registry
from conformance.impl import base as impl_base
from conformance.report import attempts, diff, merge, score, timing
from conformance.report import matrix as matrix_report
from conformance.scenario import durations, validate
from conformance.toolchain import errors, install, versions


def _toolchain_install(args: argparse.Namespace) -> int:
    try:
        kube = versions.kube_version(args.kube_version) if args.kube_version else versions.KUBERNETES_VERSION
    except ValueError as err:
        print(f"vck toolchain install: {err}", file=sys.stderr)
        return 2
    resolved = api.install_toolchain(api.ToolchainConfig(args.components, args.source, kube))
    for name, item in resolved.items():
        print(f"{name:<24} {item.component.version:<10} {item.via:<8} {item.path}")
    return 0


def _toolchain_list(args: argparse.Namespace) -> int:
    for comp, hit in api.toolchain_status():
        print(f"{comp.name:<24} {comp.version:<10} {'cached' if hit else 'missing':<8} {hit or ''}")
    return 0


def _cluster_config(args: argparse.Namespace) -> api.ClusterConfig:
    config = _cluster_config_of(args)
    problems = config.backend.validate()
    if problems:
        for problem in problems:
            print(f"vck cluster: {problem}", file=sys.stderr)
        raise SystemExit(2)
    return config


def _cluster_config_of(args: argparse.Namespace) -> api.ClusterConfig:
    config = run_config.from_args(api.ClusterConfig, vars(args))
    _existing_when_kubeconfig(args, config.backend, f"vck cluster {getattr(args, 'verb', '')}".strip())
    return config


def _existing_when_kubeconfig(args: argparse.Namespace, backend: api.BackendConfig, command: str) -> None:
    """`--kubeconfig` without `--backend` means the existing backend (said, so it is never a surprise)."""
    if getattr(args, "backend.name") is None and backend.kubeconfig:
        backend.name = "existing"
        print(f"{command}: --kubeconfig given without --backend: using the existing backend on {backend.kubeconfig}", file=sys.stderr)


def _cluster_up(args: argparse.Namespace) -> int:
    handle = api.cluster_up(_cluster_config(args))
    print(f"cluster {handle.name} ({handle.backend}) is up{' (reused)' if handle.reused else ''}")
    print(f"kubeconfig: {handle.kubeconfig}")
    print(f"export KUBECONFIG={handle.kubeconfig}")
    kubectl = dict((c.name, hit) for c, hit in api.toolchain_status()).get("kubectl")
    if kubectl is not None:
        print(f"export PATH={kubectl.parent}:$PATH  # kubectl {versions.KUBERNETES_VERSION}")
    return 0


def _cluster_down(args: argparse.Namespace) -> int:
    api.cluster_down(_cluster_config(args))
    return 0


def _cluster_status(args: argparse.Namespace) -> int:
    status = api.cluster_status(_cluster_config(args))
    state = "running" if status.running else "not running"
    print(f"cluster {status.name} ({status.backend}): {state}")
    if status.kubeconfig:
        print(f"kubeconfig: {status.kubeconfig}")
    if status.detail:
        print(status.detail)
    return 0 if status.running else 1


def _cluster_list(args: argparse.Namespace) -> int:
    found = api.list_clusters()
    if not found and not api.list_sessions():
        print("no cluster of the kit's (embedded, kind, or its nodes on an existing cluster)")
        return 0
    print(f"{'NAME':<28} {'BACKEND':<8} {'OWNER':<8} {'OWNER ALIVE':<11} {'PROCESSES':<9} {'MEMORY':<8} STATE")
    for info in found:
        owner = str(info.owner.pid) if info.owner else "by hand"
        alive = ("yes" if info.owner_alive else "no") if info.owner else "-"
        print(f"{info.name:<28} {info.backend:<8} {owner:<8} {alive:<11} {info.processes:<9} {str(info.rss_mib) + ' MiB':<8} {info.state}")
    orphans = [i.name for i in found if i.owner is not None and not i.owner_alive]
    for session in api.list_sessions():
        print(f"dev session {session.name}: cluster {session.cluster}, pid {session.pid}, {'up' if session.alive() else 'gone'} (`vck dev status --name {session.name}`)")
    if orphans:
        print(f"{len(orphans)} cluster(s) whose owner is gone: `vck cluster prune` removes them")
    return 0


def _cluster_prune(args: argparse.Namespace) -> int:
    removed = api.prune_clusters(api.PruneConfig(), progress=lambda text: print(text, file=sys.stderr))
    for name in api.prune_sessions(lambda text: print(text, file=sys.stderr)):
        print(f"removed dev session {name}, whose process is gone")
    print(f"removed {len(removed)} cluster(s) whose owner is gone" + (f": {', '.join(removed)}" if removed else ""))
    return 0


def _duration(text: str) -> float:
    """`--timeout`'s value (30m, 3600s) in seconds."""
    try:
        return durations.parse(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _run(args: argparse.Namespace) -> int:
    config = run_config.from_args(api.RunConfig, vars(args))
    _existing_when_kubeconfig(args, config.backend, "vck run")
    if config.dev is not None or config.watch:
        return _run_dev(args, config)
    problems = api.problems(config)
    if config.collect_only and not problems:
        outcome = api.run(config)
        return 0 if outcome.pytest_exit == 0 else 2
    if not problems:
        problems = api.preflight(config)
    if problems:
        for problem in problems:
            print(f"vck run: {problem}", file=sys.stderr)
        return 2
    outcome = api.run(config)
    if outcome.run is not None and outcome.run.metadata.interrupted:
        meta = outcome.run.metadata
        print(f"\nINTERRUPTED by {meta.interrupted}: {meta.selected - score.missing(outcome.run)} of {meta.selected} scenario runs have a verdict; NOT CERTIFIED")
        print(f"what ran: {outcome.report_dir}/index.html, report.json, junit.xml (marked interrupted; `latest` unchanged)")
        return interrupts.RECORD.exit_status()
    if outcome.pytest_exit == int(pytest.ExitCode.INTERRUPTED):
        print(f"vck run: interrupted by {interrupts.reason()} before any scenario had a verdict; NOT CERTIFIED", file=sys.stderr)
        return interrupts.RECORD.exit_status()
    if outcome.run is None:
        if outcome.pytest_exit == int(pytest.ExitCode.NO_TESTS_COLLECTED):
            print(f"vck run: no scenario matches -k {config.keyword!r}" if config.keyword else "vck run: no scenario was selected", file=sys.stderr)
        else:
            print(f"vck run: no report was written (pytest exited {outcome.pytest_exit}); see the output above", file=sys.stderr)
        return 2
    print()
    _print_verdict(outcome.run, outcome.certified)
    if args.verbose:
        print(timing.text(outcome.run))
    print(f"reports: {outcome.report_dir}/index.html, report.json, junit.xml")
    return 0 if outcome.certified else 1


# What a dev run takes from its session, not from the command line: refused when given.
DEV_OWN_FLAGS = (
    ("implementation", "--impl"), ("backend.name", "--backend"), ("backend.kubeconfig", "--kubeconfig"), ("backend.context", "--context"),
    ("backend.host_address", "--host-address"), ("backend.kube_version", "--kube-version"), ("backend.kind_image", "--kind-image"),
    ("backend.kind_workers", "--kind-workers"), ("backend.lend_nodes", "--lend-nodes"), ("workload_images", "--workload-images"),
)


def _dev_problems(args: argparse.Namespace, config: api.RunConfig) -> list[str]:
    problems = []
    if config.dev is None:
        problems.append("--watch runs on a dev session: add --dev (start one with `vck dev up`)")
    for dest, flag in DEV_OWN_FLAGS:
        if getattr(args, dest, None) is not None:
            problems.append(f"{flag}: a dev run uses its session's (`vck dev up {flag} ...` chooses it)")
    for flag, given in (("--jobs", config.jobs != parallel.AUTO), ("--repeat", config.repeat != 1), ("--stress", config.stress), ("--shard", config.shard), ("--collect-only", config.collect_only), ("--timeout", config.timeout_s is not None)):
        if given:
            problems.append(f"{flag}: not for a dev run, which runs the selection once, in its session's one process; drop --dev to use it")
    if config.time_scale <= 0:
        problems.append(f"--time-scale {config.time_scale}: must be greater than 0")
    return problems


def _run_dev(args: argparse.Namespace, config: api.RunConfig) -> int:
    problems = _dev_problems(args, config)
    if problems:
        for problem in problems:
            print(f"vck run: {problem}", file=sys.stderr)
        return 2
    say = lambda text: print(text, flush=True)  # noqa: E731
    try:
        if config.watch:
            api.watch(config, say, report=lambda outcome: _print_dev_outcome(outcome, config))
            return interrupts.RECORD.exit_status()
        outcome = api.run_dev(config, say)
    except api.DevError as err:
        print(f"vck run: {err}", file=sys.stderr)
        return 2
    return _print_dev_outcome(outcome, config)


def _print_dev_outcome(outcome: api.DevRun, config: api.RunConfig) -> int:
    for problem in outcome.problems:
        print(f"vck run: {problem}", file=sys.stderr, flush=True)
    if outcome.problems:
        return 2
    if outcome.run is None:
        print("vck run: interrupted before any scenario had a verdict; the dev session cleaned up", file=sys.stderr, flush=True)
        return interrupts.RECORD.exit_status()
    run = outcome.run
    tally = score.tally(run.scenarios)
    certified = score.certified(run)
    age = api.dev.process_age_s()
    took = f"; {age:.1f}s from command to verdict" if age is not None and not config.watch else f"; {run.metadata.wall_time_s:.1f}s"
    print(f"{'CERTIFIED' if certified else 'NOT CERTIFIED'} (dev session {config.dev}): passed {tally.passed}, failed {tally.failed}, error {tally.error}"
          + (f", not claimed {tally.not_claimed}" if tally.not_claimed else "") + (f", not applicable {tally.not_applicable}" if tally.not_applicable else "")
          + (" (interrupted)" if outcome.interrupted else "") + took, flush=True)
    print(f"reports: {outcome.folder}/index.html (`vck explain {run.metadata.run_id}` explains its failures)", flush=True)
    return 0 if certified and not outcome.interrupted else 1


def _dev_up(args: argparse.Namespace) -> int:
    run = run_config.from_args(api.RunConfig, vars(args))
    _existing_when_kubeconfig(args, run.backend, "vck dev up")
    config = api.DevConfig(args.name, run)
    problems = config.validate()
    if problems:
        for problem in problems:
            print(f"vck dev up: {problem}", file=sys.stderr)
        return 2
    try:
        info = api.dev_up(config, lambda text: print(text, file=sys.stderr, flush=True))
    except api.DevError as err:
        print(f"vck dev up: {err}", file=sys.stderr)
        return 2
    print(f"dev session {info.name} is up: {info.implementation} on {info.backend} (cluster {info.cluster}, pid {info.pid})")
    print(f"kubeconfig: {info.kubeconfig}")
    print("run scenarios on it: vck run --dev -k NAME   (--watch to run again on every save); stop it: vck dev down")
    return 0


def _dev_status(args: argparse.Namespace) -> int:
    try:
        status = api.dev_status(args.name)
    except api.DevError as err:
        print(f"vck dev status: {err}", file=sys.stderr)
        return 1
    info, state = status.info, status.state
    print(f"dev session {info.name}: up for {float(str(state.get('uptime_s', 0))):.0f}s, pid {info.pid}")
    print(f"  {info.implementation} on {info.backend} (cluster {info.cluster}, Kubernetes {info.kubernetes})")
    print(f"  kubeconfig: {info.kubeconfig}")
    print(f"  runs {state.get('runs')}, scenarios run {state.get('scenarios_run')}" + (f"; running {state['running']}" if state.get("running") else "; idle")
          + (f"; last run: {_tally_text(state.get('last_tally'))}" if state.get("last_tally") else ""))
    return 0


def _tally_text(tally: object) -> str:
    return ", ".join(f"{k} {v}" for k, v in tally.items()) if isinstance(tally, dict) else str(tally)


def _dev_down(args: argparse.Namespace) -> int:
    was_up = api.dev_down(args.name, lambda text: print(text, file=sys.stderr, flush=True))
    print(f"dev session {args.name} is down" if was_up else f"no dev session {args.name!r} was up")
    return 0


def _print_verdict(run: results.RunResult, certified: bool, headline: str = "") -> None:
    """The run's verdict, its tally, each suite's, and every FLAKY scenario's attempts."""
    overall = score.tally(run.scenarios)
    percent = f"{overall.score * 100:.0f}%" if overall.score is not None else "n/a"
    print(f"{'CERTIFIED' if certified else 'NOT CERTIFIED'}: {run.metadata.implementation} on {run.metadata.backend}{headline}")
    flaky = f", FLAKY {overall.flaky}" if overall.flaky else ""
    elsewhere = f", not applicable {overall.not_applicable}" if overall.not_applicable else ""
    print(f"  passed {overall.passed}, failed {overall.failed}{flaky}, not claimed {overall.not_claimed}{elsewhere}, error {overall.error}; "
          f"MUST {overall.must_passed}/{overall.must_claimed}; score {percent}; wall time {run.metadata.wall_time_s:.0f}s")
    for suite, tally in score.by_suite(run).items():
        others = [(tally.failed, "failed"), (tally.flaky, "FLAKY"), (tally.error, "error"), (tally.not_claimed, "not claimed"), (tally.not_applicable, "not applicable")]
        print(f"  {suite:<20} passed {tally.passed}/{tally.total}" + "".join(f", {label} {count}" for count, label in others if count))
    for sc in run.scenarios:
        if sc.status is results.Status.FLAKY:
            print(f"  FLAKY [{sc.level.value}] {sc.suite}/{sc.id}: {attempts.attempts_text(sc)}")


def _matrix(args: argparse.Namespace) -> int:
    impls = [s for part in args.implementations for s in part.split(",") if s]
    run = run_config.from_args(api.RunConfig, vars(args))
    bench_config = bench.BenchConfig(nodes=args.bench_nodes, pods=args.bench_pods, gang=args.bench_gang) if args.bench else None
    config = api.MatrixConfig(impls, run, args.matrix_id, bench_config)
    problems = config.validate()
    if problems:
        for problem in problems:
            print(f"vck matrix: {problem}", file=sys.stderr)
        return 2
    outcome = api.run_matrix(config, lambda text: print(text, file=sys.stderr, flush=True))
    print()
    for column in outcome.columns:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(api_matrix_summary(column).items()))
        print(f"{column.implementation:<28} Kubernetes {column.kubernetes:<9} {counts}")
    changed = [row for row in outcome.rows if row.changes()]
    print(f"{len(changed)} of {len(outcome.rows)} scenarios change verdict between neighbouring columns")
    for row in changed:
        print(f"  {row.suite}/{row.id}: {' -> '.join(v or 'absent' for v in row.verdicts)}")
    for spec in outcome.missing:
        print(f"vck matrix: {spec}: no report was written", file=sys.stderr)
    print(f"report: {outcome.folder}/index.html, matrix.json")
    if outcome.interrupted:
        print(f"vck matrix: INTERRUPTED by {outcome.interrupted}; the matrix holds the columns that ran", file=sys.stderr)
        return interrupts.RECORD.exit_status()
    return 1 if outcome.missing else 0


def api_matrix_summary(column: matrix_report.Column) -> dict[str, int]:
    counts: dict[str, int] = {}
    for sc in column.run.scenarios:
        counts[sc.status.value] = counts.get(sc.status.value, 0) + 1
    return counts


def _list(args: argparse.Namespace) -> int:
    found, problems = api.list_scenarios(api.ListConfig([pathlib.Path(p) for p in args.paths] or [api.DEFAULT_SCENARIOS]))
    for sc in sorted(found, key=lambda s: (s.suite, s.id)):
        print(f"{sc.suite:<16} {sc.level.value:<6} {sc.id}")
        print(f"{'':<23} {sc.title}")
        print(f"{'':<23} cites: {'; '.join(str(c) for c in sc.cites)}")
    for problem in problems:
        print(f"vck list: {problem}", file=sys.stderr)
    return 2 if validate.errors(problems) else 0


def _validate(args: argparse.Namespace) -> int:
    """Exit 1 when any problem is an error; warnings are shown and change nothing."""
    problems = api.validate_scenarios(api.ValidateConfig([pathlib.Path(p) for p in args.paths]))
    if problems:
        print(validate.format_problems(problems), file=sys.stderr)
    if validate.errors(problems):
        return 1
    print(f"ok: {', '.join(args.paths)}")
    return 0


def _new(args: argparse.Namespace) -> int:
    path = api.new_scenario(api.NewConfig(args.suite, args.name, pathlib.Path(args.root), args.shape))
    print(f"wrote {path} ({scaffold.SHAPES[args.shape][1]}): fill its TODO fields, then run it as you edit it:")
    print(f"  vck dev up; vck run --dev --watch {path.parent}   (docs/authoring.md, \"The authoring loop\")")
    return 0


def _bench_scheduler(args: argparse.Namespace) -> int:
    out = None if args.out == "-" else pathlib.Path(args.out or pathlib.Path(args.reports) / f"bench-{time.strftime('%Y%m%d-%H%M%S')}")
    config = bench.BenchConfig(
        nodes=args.nodes, pods=args.pods, gang=args.gang, impl=args.impl, vs=args.vs, mode=args.mode, workload=args.workload,
        rate=args.rate, cluster=args.name, node_cpu=args.node_cpu, timeout_s=args.timeout, out=out, repeat=args.repeat,
    )
    try:
        report = api.bench_scheduler(config, lambda text: print(text, file=sys.stderr, flush=True))
    except ValueError as err:
        print(f"vck bench: {err}", file=sys.stderr)
        return 2
    print(bench_render.text(report))
    if out is not None:
        print(f"figures: {out / 'bench.json'}\npage: {out / 'index.html'}")
    if not report.complete:
        for run in report.runs:
            if not run.complete:
                print(f"vck bench: {run.impl}: only {run.bound} of {run.pods} pods were bound ({run.problem.splitlines()[0] if run.problem else 'incomplete'})", file=sys.stderr)
        for i, ceiling in enumerate(report.ceilings):
            if ceiling.failed:
                print(f"vck bench: the ceiling of round {i + 1}: {ceiling.failed} requests failed", file=sys.stderr)
        return 1
    return 0


def _kind_image(args: argparse.Namespace) -> int:
    try:
        config = api.KindImageConfig(args.image, args.rebuild, args.kube_version)
        config.resolve()
    except ValueError as err:
        print(f"vck kind image: {err}", file=sys.stderr)
        return 2
    origin = api.kind_image(config)
    print(f"{config.image}: present ({origin})")
    return 0


def _diff(args: argparse.Namespace) -> int:
    config = api.DiffConfig(args.run_a, args.run_b, pathlib.Path(args.reports), pathlib.Path(args.out) if args.out else None)
    try:
        outcome = api.diff_runs(config)
    except diff.DiffError as err:
        print(f"vck diff: {err}", file=sys.stderr)
        return 2
    print(outcome.table)
    print(f"page: {outcome.page}")
    return 1 if outcome.differences else 0


def _explain(args: argparse.Namespace) -> int:
    try:
        print(api.explain_run(api.ExplainConfig(args.run, args.ids, pathlib.Path(args.reports), args.all)))
    except diff.DiffError as err:
        print(f"vck explain: {err}", file=sys.stderr)
        return 2
    return 0


def _report_merge(args: argparse.Namespace) -> int:
    try:
        outcome = api.merge_reports(api.MergeConfig(args.shards, pathlib.Path(args.reports), args.run_id))
    except merge.MergeError as err:
        print(f"vck report merge: {err}", file=sys.stderr)
        return 2
    _print_verdict(outcome.run, outcome.certified, f", {len(args.shards)} shards merged")
    if outcome.run.metadata.interrupted:
        print(f"  incomplete: {outcome.run.metadata.interrupted}")
    print(f"reports: {outcome.folder}/index.html, report.json, junit.xml")
    return 0 if outcome.certified else 1


# A flag's `dest` is the path of the config field it sets (config.from_args): a new option is its
# field and one line here.
def _selection_flags(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("scenarios", metavar="paths", nargs="*", type=pathlib.Path, help=f"scenario files or folders (default: {api.DEFAULT_SCENARIOS})")
    cmd.add_argument("--suite", dest="suites", action=_CommaList, default=[], help="only these suites (comma-separated, repeatable)")
    cmd.add_argument("-k", dest="keyword", default=None, help="only scenarios whose id matches this pytest -k expression")


def _backend_flags(cmd: argparse.ArgumentParser, starts: bool = True) -> None:
    """The cluster backend's flags, the same for `vck run` and `vck cluster`; `starts`: also those
    that only matter when a cluster is started (not for `cluster down` or `status`)."""
    cmd.add_argument("--backend", dest="backend.name", choices=registry.BACKENDS, default=None, help="embedded (default), kind, or existing (the default when --kubeconfig is given)")
    cmd.add_argument("--kubeconfig", dest="backend.kubeconfig", help="existing backend: the kubeconfig to use")
    cmd.add_argument("--context", dest="backend.context", help="existing backend: the context to use")
    if not starts:
        return
    cmd.add_argument("--host-address", dest="backend.host_address", default=None, help="existing backend: this machine's address as the cluster's API server reaches it (for the implementation's webhook)")
    cmd.add_argument("--lend-nodes", dest="backend.lend_nodes", type=int, default=None, help="existing backend: lend up to N of the cluster's Ready, untainted worker nodes to the scenarios that run real containers (workloads; labelled conformance.vck.io/lent=true for a scenario's time; their images from --workload-images) (default 0)")
    cmd.add_argument("--kind-workers", dest="backend.kind_workers", type=int, default=None, help="kind backend: real workers beside the control plane (default 0: scenarios run on kwok nodes)")
    cmd.add_argument("--kind-image", dest="backend.kind_image", default=None, help=f"kind backend: a node image you have, present in the engine or pullable, never built here (default: the kit's {versions.KIND_NODE_IMAGE}, built here when missing)")
    cmd.add_argument("--kube-version", dest="backend.kube_version", default=None, help=f"the Kubernetes release to run, a minor of {', '.join(versions.KUBERNETES_RELEASES)}: the embedded cluster's, or kind's node image of it (pulled, else built here) (default: embedded, for `vck run`, the one the implementation was built against; else {versions.KUBERNETES_VERSION})")


class _CommaList(argparse.Action):
    """A repeatable flag of comma-separated values, gathered into one list."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: str | None = None) -> None:
        gathered = list(getattr(namespace, self.dest, None) or [])
        setattr(namespace, self.dest, gathered + [v for v in str(values).split(",") if v])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vck", description="The Volcano conformance kit.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="the main job: run the conformance suites and write the reports (exit 0 only when certified)")
    _selection_flags(run)
    run.add_argument("--impl", dest="implementation", help="implementation: reference, reference:broken=gang, volcano[:VERSION], volcano-manifests[:file=F,images=R,tag=T] or volcano-helm[:...] (installed in a kind or existing cluster), preinstalled:CAPS.yaml")
    _backend_flags(run)
    run.add_argument("--jobs", default=parallel.AUTO, help="parallel workers, each with its own cluster: a number, or auto (default: embedded two per core, kind one per core, as memory allows, one per 4 scenarios, 8 at most; existing 1)")
    run.add_argument("--time-scale", type=float, default=1.0, help="stretch every window for slow clusters")
    run.add_argument("--reports", type=pathlib.Path, default=api.DEFAULT_REPORTS, help="where reports go (a folder per run, and `latest`)")
    run.add_argument("--run-id", default=None, help="the report folder's name (default: a timestamp)")
    run.add_argument("-v", "--verbose", action="store_true")
    run.add_argument("--timeout", dest="timeout_s", type=_duration, default=None, help="a deadline for the whole run (30m, 3600s): a run that reaches it stops, is reported as interrupted and exits 124")
    run.add_argument("--collect-only", action="store_true", help="list the scenarios the run would run (with --suite, -k and paths applied), and run nothing")
    run.add_argument("--durations", type=pathlib.Path, default=None, help="an earlier run's report.json: the scenarios it shows as long start first (default: the last whole run's under --reports, else reports/reference's)")
    on_dev = run.add_mutually_exclusive_group()
    on_dev.add_argument("--dev", dest="dev", action="store_const", const="dev", default=None, help="run on the warm dev session (`vck dev up`) in its one process: seconds for a scenario, its failures explained here")
    on_dev.add_argument("--dev-session", dest="dev", default=None, help="run on the dev session of this name (`vck dev up --name NAME`)")
    run.add_argument("--watch", action="store_true", default=None, help="with --dev: run again whenever a scenario file under the paths changes (the changed files, and what failed last)")
    run.add_argument("--workload-images", dest="workload_images", default=None, help="the workloads suite's images instead of the ones the kit builds here: mpi=IMAGE,torch=IMAGE,ray=IMAGE (present in the engine or pullable)")
    run.add_argument("--repeat", type=int, default=1, help="run every selected scenario N times, interleaved and spread over the workers; a scenario whose attempts end differently is FLAKY and the run is not certified (docs/flakes.md)")
    run.add_argument("--stress", type=int, default=0, help="keep N busy CPU processes running beside the run, for all of it: hunt flakes that need a busy machine (docs/flakes.md)")
    run.add_argument("--shard", default=None, help="K/N: run only a stable 1/N of the selection (balanced by --durations when given), for CI jobs side by side; `vck report merge` makes one run of the shards")
    run.set_defaults(func=_run)

    mat = sub.add_parser("matrix", help="the same scenarios against several implementations (Volcano releases, the reference), one report side by side")
    mat.add_argument("implementations", nargs=1, help="comma-separated: volcano:v1.12.4,volcano:v1.13.3,volcano:v1.15.1,reference")
    _selection_flags(mat)
    mat.add_argument("--jobs", default=parallel.AUTO, help="parallel workers of each run (default: auto)")
    mat.add_argument("--kube-version", dest="backend.kube_version", default=None, help="every column on this Kubernetes (default: each on the minor it was built for)")
    mat.add_argument("--reports", type=pathlib.Path, default=api.DEFAULT_REPORTS, help="where the matrix's folder goes")
    mat.add_argument("--matrix-id", default=None, help="the matrix folder's name (default: matrix-<time>)")
    mat.add_argument("--bench", action="store_true", help="also the scheduler bench per implementation, on the same cluster shape")
    mat.add_argument("--bench-nodes", type=int, default=50)
    mat.add_argument("--bench-pods", type=int, default=1000)
    mat.add_argument("--bench-gang", type=int, default=10)
    mat.set_defaults(func=_matrix)

    dif = sub.add_parser("diff", help="every scenario whose verdict differs between two runs: a text table and a page with both timelines (exit 1 when any differs)")
    dif.add_argument("run_a", help="a report.json, a run folder, or a run id under --reports (`latest` too)")
    dif.add_argument("run_b")
    dif.add_argument("--reports", default=str(api.DEFAULT_REPORTS), help="where run ids are looked up and the page goes")
    dif.add_argument("--out", default=None, help="the page's path (default: <reports>/diff-<A>-vs-<B>.html)")
    dif.set_defaults(func=_diff)

    exp = sub.add_parser("explain", help="why a run's scenarios failed, in the terminal: each failed check's expected and observed, and the timeline that led to it")
    exp.add_argument("run", help="a report.json, a run folder, or a run id under --reports (`latest` too)")
    exp.add_argument("ids", nargs="*", help="only these scenarios, whatever their verdict (default: every one that did not pass)")
    exp.add_argument("--reports", default=str(api.DEFAULT_REPORTS), help="where run ids are looked up")
    exp.add_argument("--all", action="store_true", help="list the passed checks too")
    exp.set_defaults(func=_explain)

    rep = sub.add_parser("report", help="work on written reports")
    rsub = rep.add_subparsers(dest="report_command", required=True)
    rmerge = rsub.add_parser("merge", help="one run made of the shards of one (`vck run --shard K/N`): certified only when every shard ran whole and the union certifies (exit 0 certified, 1 not, 2 not the shards of one run)")
    rmerge.add_argument("shards", nargs="+", help="each shard's report.json, run folder, or run id under --reports")
    rmerge.add_argument("--reports", default=str(api.DEFAULT_REPORTS), help="where run ids are looked up and the merged run's folder goes")
    rmerge.add_argument("--run-id", default=None, help="the merged run's folder name (default: merged-<time>)")
    rmerge.set_defaults(func=_report_merge)

    lst = sub.add_parser("list", help="the scenarios, with suite, level and cites")
    lst.add_argument("paths", nargs="*")
    lst.set_defaults(func=_list)

    val = sub.add_parser("validate", help="check scenario files; one clear error per problem")
    val.add_argument("paths", nargs="+")
    val.set_defaults(func=_validate)

    new = sub.add_parser("new", help="start a scenario from a template that validates and passes on the reference as written")
    new.add_argument("suite")
    new.add_argument("name")
    new.add_argument("--root", default="scenarios", help="the scenarios folder (default: ./scenarios)")
    new.add_argument("--shape", choices=scaffold.SHAPES, default=scaffold.DEFAULT_SHAPE, help="; ".join(f"{k}: {v[1]}" for k, v in scaffold.SHAPES.items()) + f" (default {scaffold.DEFAULT_SHAPE})")
    new.set_defaults(func=_new)

    toolchain = sub.add_parser("toolchain", help="the pinned Kubernetes binaries the embedded cluster runs on")
    tsub = toolchain.add_subparsers(dest="toolchain_command", required=True)
    tinstall = tsub.add_parser("install", help="put every pinned component into the cache (cache, then release download, then go build)")
    tinstall.add_argument("components", nargs="*", help="only these components (default: all); `helm` too, which only --impl volcano-helm needs")
    tinstall.add_argument("--source", choices=install.SOURCES, default="auto", help="auto: release download, falling back to go build (default)")
    tinstall.add_argument("--kube-version", default=None, help=f"Kubernetes at this release, a minor of {', '.join(versions.KUBERNETES_RELEASES)} (default {versions.KUBERNETES_VERSION})")
    tinstall.set_defaults(func=_toolchain_install)
    tlist = tsub.add_parser("list", help="the pinned components and whether each is cached")
    tlist.set_defaults(func=_toolchain_list)

    bench_cmd = sub.add_parser("bench", help="benchmarks that print figures")
    bsub = bench_cmd.add_subparsers(dest="bench_command", required=True)
    bsched = bsub.add_parser("scheduler", help="binds/s against the cluster's own ceiling, p50/p99 time-to-bind and time-to-gang, CPU and memory per component, on an embedded cluster of kwok nodes")
    bsched.add_argument("--nodes", type=int, default=10)
    bsched.add_argument("--pods", type=int, default=100)
    bsched.add_argument("--gang", type=int, default=10, help="pods per PodGroup (minMember)")
    bsched.add_argument("--impl", default="reference", help="any implementation adapter, as for `vck run`")
    bsched.add_argument("--vs", default=None, help="a second implementation, run the same way right after the first on a cluster of the same shape")
    bsched.add_argument("--mode", choices=bench.MODES, default="scheduler-only", help="scheduler-only: the workload is created with the scheduler stopped, timed from its start (default); end-to-end: Volcano Jobs, with controller and scheduler stopped; steady: gangs arrive at --rate while it runs; ceiling: only the cluster's own create and bind rates")
    bsched.add_argument("--workload", choices=("podgroups", "jobs"), default=None, help="podgroups (PodGroups and pods) or jobs (Volcano Jobs); default: jobs for end-to-end, else podgroups")
    bsched.add_argument("--rate", type=float, default=100.0, help="steady: pods per second, in whole gangs (keep it below the ceiling)")
    bsched.add_argument("--repeat", type=int, default=1, help="rounds: each measures the ceiling and every implementation again (their order alternating); medians are printed")
    bsched.add_argument("--node-cpu", default="32", help="CPUs of each node")
    bsched.add_argument("--name", default="vck-bench", help="the embedded clusters' name (one at a time, each removed after its measure)")
    bsched.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for every pod to be bound after the start")
    bsched.add_argument("--reports", default=str(api.DEFAULT_REPORTS), help="where the bench's folder goes (bench-<time>/ with bench.json and index.html)")
    bsched.add_argument("--out", default=None, help="the folder for bench.json and index.html instead (- for none)")
    bsched.set_defaults(func=_bench_scheduler)

    kind_cmd = sub.add_parser("kind", help="what the kind backend needs")
    ksub = kind_cmd.add_subparsers(dest="kind_command", required=True)
    kimage = ksub.add_parser("image", help="make the node image present: pulled, or built here from Debian's packages and Go modules when it cannot be")
    kimage.add_argument("--kube-version", default=None, help=f"the node of this Kubernetes release, a minor of {', '.join(versions.KUBERNETES_RELEASES)} (default {versions.KUBERNETES_VERSION})")
    kimage.add_argument("--image", default=None, help="the tag to give it (default: kindest/node:<release>)")
    kimage.add_argument("--rebuild", action="store_true", help="build it here even if present (or pullable)")
    kimage.set_defaults(func=_kind_image)

    dev = sub.add_parser("dev", help="a warm dev session for authoring scenarios: a cluster and the implementation kept up between `vck run --dev` runs")
    dsub = dev.add_subparsers(dest="dev_command", required=True)
    dup = dsub.add_parser("up", help="start a dev session and keep it (until `vck dev down`)")
    dup.add_argument("--impl", dest="implementation", help="the implementation it runs (default: reference); as for `vck run`")
    _backend_flags(dup)
    dup.add_argument(
        "--workload-images", dest="workload_images", default=None,
        help="with --kind-workers or --lend-nodes: the workloads suite's images instead of the ones the kit builds here (kind): mpi=IMAGE,torch=IMAGE,ray=IMAGE",
    )
    for verb, func, text in (("up", _dev_up, ""), ("status", _dev_status, "say whether the session is up and what it runs"), ("down", _dev_down, "stop the session: its scenario under way, the implementation, the cluster")):
        cmd = dup if verb == "up" else dsub.add_parser(verb, help=text)
        cmd.add_argument("--name", default="dev", help="the session's name (default: dev), for more than one at a time")
        cmd.set_defaults(func=func)

    cluster = sub.add_parser("cluster", help="start, inspect and stop a cluster")
    csub = cluster.add_subparsers(dest="cluster_command", required=True)
    for verb, func, text in (
        ("up", _cluster_up, "start a cluster (or reuse a healthy one of the same name)"),
        ("down", _cluster_down, "stop every process the cluster started and remove its state"),
        ("status", _cluster_status, "say whether the cluster is running"),
    ):
        cmd = csub.add_parser(verb, help=text)
        _backend_flags(cmd, starts=verb == "up")
        cmd.add_argument("--name", default="vck", help="cluster name (default: vck)")
        if verb == "up":
            cmd.add_argument("--nodes", default=None, help=f"node groups, e.g. '4:cpu=8,memory=32Gi;2:nvidia.com/gpu=8,label:gpu=yes' (default: {nodes.DEFAULT_SPEC} nodes of {nodes.DEFAULT_CPU} cpu, {nodes.DEFAULT_MEMORY})")
        cmd.set_defaults(func=func, verb=verb)
    csub.add_parser("list", help="every cluster the kit started (embedded, kind) or put its nodes on (existing), with its owner and whether the owner still runs").set_defaults(func=_cluster_list)
    csub.add_parser("prune", help="remove what every run whose owner is gone left (a `vck run` killed with -9, say): its embedded or kind cluster, or its nodes on an existing one").set_defaults(func=_cluster_prune)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # SIGTERM cleans up like Ctrl-C: both unwind through the same `finally` blocks.
    interrupts.RECORD.install()
    try:
        try:
            return _command(argv)
        finally:
            sys.stdout.flush()  # a reader that left shows here, not as a complaint at exit
            interrupts.forget_caught_interrupts()  # the status returned is the one `python -m` exits with
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """The reader of our output left (`vck list | head`): end quietly, as Python's documentation
    recommends: stdout now points at devnull, so the flush at exit finds nothing to complain
    about, and the exit status is 1 (the output was cut short)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 1


def _command(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print(f"vck: interrupted by {interrupts.reason()}; cleaned up", file=sys.stderr)
        return interrupts.RECORD.exit_status()
    except (errors.ToolchainError, base.ClusterError, nodes.NodeSpecError, impl_base.ImplementationError, scaffold.ScaffoldError, api.DevError) as err:
        print(f"vck: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
