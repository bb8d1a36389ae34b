"""The toolchain, kind's node image, the scheduler bench and run comparisons: `vck toolchain`,
`vck kind image`, `vck bench scheduler`, `vck diff`, `vck explain`."""

from __future__ import annotations

import dataclasses
import pathlib
import re
import sys
from typing import Callable, Sequence

from conformance import config as run_config
from conformance import results
from conformance.api import run as api_run
from conformance.bench import figures as bench_figures
from conformance.bench import scheduler as bench
from conformance.cluster import docker
from conformance.cluster import kind_image as node_image
from conformance.report import diff, explain, merge, score, writer
from conformance.toolchain import install, versions


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclasses.dataclass
class ToolchainConfig:
    # Only these components (versions.COMPONENTS' names); empty: all.
    components: Sequence[str] = ()
    source: install.Source = "auto"
    # Kubernetes' components at this pinned release.
    kube: str = versions.KUBERNETES_VERSION


def install_toolchain(config: ToolchainConfig, progress: Callable[[str], None] = _stderr) -> dict[str, install.Resolved]:
    return install.install(config.components, source=config.source, progress=progress, kube=config.kube)


def toolchain_status() -> list[tuple[versions.Component, pathlib.Path | None]]:
    """Every pinned component and where the cache has it (None: missing); helm last (only
    `--impl volcano-helm` needs it)."""
    return [(comp, install.cached(comp)) for comp in (*versions.COMPONENTS, versions.helm_component())]


@dataclasses.dataclass
class KindImageConfig:
    # The tag; None: kindest/node:<the release>.
    image: str | None = None
    # Build it here even when present (or pullable).
    rebuild: bool = False
    # The pinned Kubernetes release the image is the node of (a minor such as "1.34"); None: the
    # release the image's tag names, else the default.
    kube_version: str | None = None

    def resolve(self) -> None:
        """Settle both as exact values, refusing a tag that names another release than the one
        asked for (the recipe would put one release under another's name). ValueError says why."""
        tagged = re.search(r":(v\d+\.\d+\.\d+)$", self.image or "")
        kube = versions.kube_version(self.kube_version) if self.kube_version else None
        if tagged and kube and tagged.group(1) != kube:
            raise ValueError(f"--image {self.image} names {tagged.group(1)}, --kube-version {kube}: give one, or both alike")
        if kube is None:
            kube = versions.kube_version(tagged.group(1)) if tagged else versions.KUBERNETES_VERSION
        self.kube_version = kube
        self.image = self.image or versions.kind_node_image(kube)


def kind_image(config: KindImageConfig, progress: Callable[[str], None] = _stderr) -> str:
    """Make kind's node image present; returns where it came from."""
    config.resolve()
    assert config.image is not None and config.kube_version is not None
    engine = docker.ensure(progress)
    if config.rebuild:
        node_image.build(engine, config.image, progress, force=True, kube=config.kube_version)
    else:
        node_image.ensure(engine, config.image, progress, kube=config.kube_version)
    return "built here" if node_image.is_static_cni(engine, config.image) else "kind's published image"


def bench_scheduler(config: bench.BenchConfig, progress: Callable[[str], None]) -> bench_figures.Report:
    """The cluster's ceiling and each implementation's figures on embedded clusters of kwok nodes
    (ValueError: a config that cannot run)."""
    return bench.run(config, progress)


@dataclasses.dataclass
class DiffConfig:
    # Each a report.json, a run folder, or a run id under `reports` (`latest` too).
    run_a: str
    run_b: str
    reports: pathlib.Path = run_config.DEFAULT_REPORTS
    # The page's path; None: <reports>/diff-<A>-vs-<B>.html.
    out: pathlib.Path | None = None


@dataclasses.dataclass(frozen=True)
class DiffOutcome:
    table: str
    page: pathlib.Path
    differences: int


def diff_runs(config: DiffConfig) -> DiffOutcome:
    """Every scenario whose verdict differs between two runs: a text table and a page with both
    timelines (diff.DiffError: a run that cannot be read)."""
    reports_root = pathlib.Path(config.reports)
    run_a, run_b = diff.read(config.run_a, reports_root), diff.read(config.run_b, reports_root)
    found = diff.differences(run_a, run_b)
    out = config.out or reports_root / f"diff-{run_a.metadata.run_id}-vs-{run_b.metadata.run_id}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(diff.render(run_a, run_b, found), encoding="utf-8")
    return DiffOutcome(diff.text_table(run_a, run_b, found), out, len(found))


@dataclasses.dataclass
class ExplainConfig:
    # A report.json, a run folder, or a run id under `reports` (`latest` too).
    run: str
    # Only these scenarios (whatever their verdict); empty: every one that did not pass.
    ids: Sequence[str] = ()
    reports: pathlib.Path = run_config.DEFAULT_REPORTS
    # Every check, the passed ones too.
    all_checks: bool = False


def explain_run(config: ExplainConfig) -> str:
    """The run's failures (or the named scenarios) explained as text: each failed check's expected
    and observed, and the timeline slice that leads to it (diff.DiffError: a run that cannot be
    read, or an id it does not hold)."""
    run = diff.read(config.run, pathlib.Path(config.reports))
    unknown = sorted(set(config.ids) - {sc.id for sc in run.scenarios})
    if unknown:
        raise diff.DiffError(f"run {run.metadata.run_id} has no scenario {', '.join(unknown)}")
    return explain.run_text(run, config.ids, explain.Options(all_checks=config.all_checks))


@dataclasses.dataclass
class MergeConfig:
    # The shards' reports: each a report.json, a run folder, or a run id under `reports`.
    shards: Sequence[str]
    reports: pathlib.Path = run_config.DEFAULT_REPORTS
    # The merged run's folder name (None: merged-<time>).
    run_id: str | None = None


@dataclasses.dataclass(frozen=True)
class MergeOutcome:
    folder: pathlib.Path
    run: results.RunResult
    certified: bool


def merge_reports(config: MergeConfig) -> MergeOutcome:
    """One run made of the shards of one (`vck run --shard K/N`), its three reports written
    (merge.MergeError: reports that are not the shards of one run, or cannot be read). `latest`
    follows the merged run when it is whole."""
    reports_root = pathlib.Path(config.reports)
    try:
        runs = [diff.read(ref, reports_root) for ref in config.shards]
    except diff.DiffError as err:
        raise merge.MergeError(str(err)) from err
    run_id = config.run_id or "merged-" + api_run.new_run_id()
    merged = merge.merge(runs, run_id, command="vck report merge " + " ".join(config.shards))
    folder = writer.write_all(merged, reports_root)
    return MergeOutcome(folder, merged, score.certified(merged))
