"""A run's configuration, declared once: the cluster backend's part (`BackendConfig`, composed into
every operation that needs a cluster, as sonobuoy's RunConfig embeds GenConfig) and the run's own
(`RunConfig`). Both are validated here and nowhere else.

The configuration travels whole: `vck run` hands it to pytest in-process (the plugin's stash), and
pytest-xdist's workers get it serialised once (`to_json`/`from_json`); it is never rebuilt from
flags. A plain `pytest scenarios/` builds it from the `--vck-*` options, which are made from the
fields themselves (each field's `OPTION` metadata), and `vck` builds it from its flags by field
name (`from_args`: a flag's `dest` is its field's path, `backend.kube_version`): adding a run option
is one field here and its flag in cli.py.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import pathlib
import re
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar, cast

from conformance import data, parallel, shards
from conformance.cluster import base
from conformance.toolchain import versions

if TYPE_CHECKING:  # importing these costs a second: the pytest plugin's options read this module
    from conformance.cluster import owners
    from conformance.scenario import loader, models

# The version, from the one place it is declared (pyproject.toml, through the installed metadata).
KIT_VERSION = importlib.metadata.version("volcano-conformance-kit")
# The kit's own suites, shipped inside the package.
DEFAULT_SCENARIOS = data.scenarios()
# Reports go under the current folder (in a clone, `make demo` runs from its root).
DEFAULT_REPORTS = pathlib.Path("reports")

Config = TypeVar("Config")

# Field metadata: the pytest option a field is also given as (for a plain `pytest --vck scenarios/`).
OPTION = "vck_option"
# The key under which `vck run` hands the run to pytest-xdist's workers (their workerinput).
WORKER_INPUT = "vck_run"


@dataclasses.dataclass(frozen=True)
class Option:
    """How a field reads as a `--vck-*` pytest option: its flag, its help, and how a value is
    parsed (`int`, `float`, `str`, `path`, `paths` (repeatable), `jobs`)."""

    flag: str
    help: str
    kind: str = "str"


def option(default: Any, flag: str, help: str, kind: str = "str") -> Any:
    return dataclasses.field(default=default, metadata={OPTION: Option(flag, help, kind)})


@dataclasses.dataclass
class BackendConfig:
    """Where scenarios run: the backend and what it needs (a kubeconfig for an existing cluster,
    real workers for kind)."""

    name: str = option("embedded", "--vck-backend", "cluster backend: embedded (default), kind or existing")
    kubeconfig: str | None = option(None, "--vck-kubeconfig", "existing backend: kubeconfig path")
    context: str | None = option(None, "--vck-context", "existing backend: kubeconfig context")
    # kind: real workers beside the control plane; existing: this machine's address as the
    # cluster's API server reaches it (for the implementation's webhook).
    kind_workers: int = option(0, "--vck-kind-workers", "kind backend: real workers beside the control plane", "int")
    host_address: str | None = option(None, "--vck-host-address", "existing backend: this machine's address as the cluster's API server reaches it")
    # existing: how many of the cluster's own nodes (Ready, schedulable, untainted workers) the
    # kit may lend to scenarios that run real containers (`real_nodes`), labelling one for a
    # scenario's time; 0: it touches none of them.
    lend_nodes: int = option(0, "--vck-lend-nodes", "existing backend: lend up to N of the cluster's worker nodes to scenarios that run real containers", "int")
    # The Kubernetes release an embedded cluster runs, or kind's node image is of (a pinned one,
    # versions.KUBERNETES_RELEASES); None: for embedded the implementation's own (a Volcano
    # release's go.mod minor), else the default.
    kube_version: str | None = option(None, "--vck-kube-version", "the Kubernetes release to run (a minor such as 1.34): the embedded cluster's, or kind's node image of it")
    # A node image a user already has (kind's published kindest/node:<version>, say) instead of
    # the one the kit builds offline; None: the kit's (conformance/cluster/kind_image.py).
    kind_image: str | None = option(None, "--vck-kind-image", "kind backend: a node image you have (present or pullable) instead of the kit's kindest/node, which it builds here when missing")
    # The workloads' images by recipe name (`vck.workload/<name>` in a scenario): chosen once by
    # the run (built here, or the user's --workload-images) and handed to every worker; kind
    # loads those this machine's engine holds into its real workers. Not a flag.
    images: dict[str, str] = dataclasses.field(default_factory=dict)
    # kind: the fake device plugin on the real workers (a selected scenario's real pods ask for
    # GPUs). Set by the run, not a flag.
    device_plugin: bool = False

    def real_node_capacity(self) -> int:
        """How many nodes that run containers this backend lends to a scenario (`real_nodes`):
        kind's real workers; on an existing cluster the ones the user lends (`--lend-nodes`: its
        nodes are the user's, relabelled only when asked); none on the embedded cluster (kwok only)."""
        return {"kind": self.kind_workers, "existing": self.lend_nodes}.get(self.name, 0)

    def validate(self) -> list[str]:
        problems = []
        if self.name not in base.BACKENDS:
            problems.append(f"backend {self.name!r}: use one of {', '.join(base.BACKENDS)}")
        if self.kind_workers < 0:
            problems.append(f"--kind-workers {self.kind_workers}: must be 0 or more")
        if self.lend_nodes < 0:
            problems.append(f"--lend-nodes {self.lend_nodes}: must be 0 or more")
        elif self.lend_nodes and self.name != "existing":
            problems.append(f"--lend-nodes {self.lend_nodes}: only an existing cluster lends its own nodes (kind lends its workers: --kind-workers)")
        if self.kind_image is not None and self.name != "kind":
            problems.append(f"--kind-image {self.kind_image}: only the kind backend runs a node image ({self.name} does not)")
        if self.kube_version is not None:
            try:
                versions.kube_version(self.kube_version)
            except ValueError as err:
                problems.append(str(err))
            if self.name == "existing":
                # An existing cluster runs the Kubernetes it has.
                problems.append(f"--kube-version {self.kube_version}: an existing cluster runs its own Kubernetes")
            if self.kind_image is not None:
                problems.append(f"--kube-version {self.kube_version} and --kind-image {self.kind_image}: give one (the image's Kubernetes is the one that runs)")
        return problems

    def kubernetes(self) -> str:
        """The Kubernetes release the backend runs, as a report states it: the one chosen for an
        embedded cluster; for kind, a user's node image's tag where it names a release
        (`kindest/node:v1.34.0`), else the image itself; else the kit's default."""
        if self.kube_version is not None:
            return versions.kube_version(self.kube_version)
        if self.kind_image is not None:
            tagged = re.search(r":(v\d+\.\d+\.\d+)(?:$|[@-])", self.kind_image)
            return tagged.group(1) if tagged else f"as in the node image {self.kind_image}"
        return versions.KUBERNETES_VERSION

    def etcd(self) -> str:
        """The etcd a report states: the kit's for an embedded cluster; on kind the one its node
        image's kubeadm runs; on an existing cluster whatever that cluster runs."""
        if self.name == "embedded":
            return versions.ETCD_VERSION
        if self.name == "kind":
            return "as in the node image"
        return "as in the cluster"

    def backend(self, progress: Callable[[str], None] | None = None, owner: owners.Owner | None = None) -> base.ClusterBackend:
        from conformance.cluster import registry

        return registry.backend(
            self.name, kubeconfig=self.kubeconfig, context=self.context, owner=owner, progress=progress,
            kind_workers=self.kind_workers, kind_image=self.kind_image, host_address=self.host_address, lend_nodes=self.lend_nodes, kind_images=tuple(self.images.values()), kind_device_plugin=self.device_plugin,
            kube_version=versions.kube_version(self.kube_version) if self.kube_version else None,
        )

    def preflight(self) -> list[str]:
        """What stops the backend from working (an existing cluster's kubeconfig, context, API
        server), found before anything starts; empty for backends the kit starts itself."""
        check = getattr(self.backend(), "preflight", None)
        return list(check()) if check is not None else []


@dataclasses.dataclass
class RunConfig:
    backend: BackendConfig = dataclasses.field(default_factory=BackendConfig)
    scenarios: Sequence[pathlib.Path] = option((DEFAULT_SCENARIOS,), "--vck-scenarios", "a folder (or file) of scenarios: its YAML files are collected whatever the folder's name (repeatable)", "paths")
    suites: Sequence[str] = ()
    keyword: str | None = None
    implementation: str = option("reference", "--vck-impl", "implementation under test: reference, reference:broken=gang, volcano[:VERSION], preinstalled:CAPS.yaml")
    # A number of workers, or parallel.AUTO: chosen from the machine's cores and memory.
    jobs: int | str = parallel.AUTO
    time_scale: float = option(1.0, "--vck-time-scale", "stretch every scenario window by this factor (slow clusters)", "float")
    reports: pathlib.Path | None = option(DEFAULT_REPORTS, "--vck-report-dir", "write the run's reports under this folder (none: no reports)", "path")
    run_id: str | None = option(None, "--vck-run-id", "the report folder's name (default: a timestamp)")
    verbose: bool = False
    # The whole run's deadline in seconds: a run that reaches it ends as an interrupted one.
    timeout_s: float | None = None
    # Only say which scenarios the run would run.
    collect_only: bool = False
    # Run every selected scenario this many times, interleaved with the others and spread over
    # the workers; a scenario whose attempts end differently is FLAKY (never certified).
    repeat: int = option(1, "--vck-repeat", "run every scenario this many times, interleaved; a scenario whose attempts end differently is FLAKY", "int")
    # Busy CPU processes kept running beside the run, for the whole of it (docs/flakes.md).
    stress: int = option(0, "--vck-stress", "how many busy CPU processes ran beside the run (recorded in the report; `vck run --stress` starts them)", "int")
    # An earlier run's report.json whose long scenarios start first (None: the last whole run's
    # under `reports`).
    durations: pathlib.Path | None = option(None, "--vck-durations", "an earlier run's report.json: scenarios it shows as long run first", "path")
    # `K/N`: only a stable 1/N of the selection (conformance/shards.py), balanced by the
    # durations above when there are some; `vck report merge` makes one report of the shards.
    shard: str | None = option(None, "--vck-shard", "K/N: run a stable 1/N of the selection")
    # `vck run --dev`: the dev session (by name) that runs the selection, warm, in its one process
    # (conformance/dev); None: the run starts its own workers and clusters. `--watch`: run again
    # whenever a scenario file under the paths changes.
    dev: str | None = None
    watch: bool = False
    # The user's workload images instead of the kit's (`mpi=IMAGE,torch=IMAGE,ray=IMAGE`); None: built here.
    workload_images: str | None = option(None, "--vck-workload-images", "the workloads suite's images by recipe instead of the kit's, built here: mpi=IMAGE,torch=IMAGE,ray=IMAGE")
    # The scenario tree as loaded (once): the paths it was loaded from, the scenarios, the problems.
    _loaded: tuple[tuple[str, ...], list[models.Scenario], list[loader.Problem]] | None = dataclasses.field(default=None, init=False, repr=False, compare=False)
    _shard_durations: dict[str, float] | None = dataclasses.field(default=None, init=False, repr=False, compare=False)
    # The ids `-k` selects, as pytest's own collection judged them (api.run: judged once, before
    # anything starts), and the `-k` they are of; None: not judged yet.
    keyword_ids: tuple[str, ...] | None = dataclasses.field(default=None, init=False, repr=False, compare=False)
    keyword_judged: str | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    # --- validation -------------------------------------------------------------------------------
    def validate(self) -> list[str]:
        """Every problem of the configuration and of the scenarios it selects, one line each
        (`-k` is judged by pytest itself: api.problems)."""
        problems = self.validate_settings()
        for path in self.scenarios:
            if not pathlib.Path(path).exists():
                problems.append(f"scenario path {path} does not exist")
        found = self.selected_or_empty()
        assert self._loaded is not None
        # A file that does not load is never dropped quietly: the run refuses to start.
        problems += [f"invalid scenario: {p}" for p in self._loaded[2] if p.is_error]
        existing = [p for p in self.scenarios if pathlib.Path(p).exists()]
        if existing and not found:
            problems.append(f"no scenario under {', '.join(map(str, existing))} (scenario files are YAML files, each in a folder named after its suite)")
        known = {sc.suite for sc in found}
        for suite in self.suites:
            if suite not in known:
                problems.append(f"no suite {suite!r} under {', '.join(map(str, self.scenarios))}; suites: {', '.join(sorted(known))}")
        return problems

    def validate_settings(self) -> list[str]:
        """The settings alone, without reading a scenario: what a plain pytest run checks."""
        problems = self.backend.validate()
        try:
            parallel.parse_jobs(str(self.jobs))
        except ValueError as err:
            problems.append(str(err))
        if self.time_scale <= 0:
            problems.append(f"--time-scale {self.time_scale}: must be greater than 0")
        if self.repeat < 1:
            problems.append(f"--repeat {self.repeat}: must be at least 1")
        if self.stress < 0:
            problems.append(f"--stress {self.stress}: must be 0 or more")
        if self.shard is not None:
            try:
                shards.parse(self.shard)
            except ValueError as err:
                problems.append(str(err))
        if self.backend.name == "existing" and str(self.jobs) not in (parallel.AUTO, "1"):
            # Each worker would shape the one cluster's nodes for its own scenario.
            problems.append(f"--jobs {self.jobs}: an existing cluster is shared, and each scenario shapes its nodes: use --jobs 1 (auto is 1 there)")
        if self.timeout_s is not None and self.timeout_s <= 0:
            problems.append(f"--timeout {self.timeout_s:g}s: must be greater than 0")
        from conformance.cluster import workload_images
        from conformance.impl import registry as impl_registry

        try:
            workload_images.parse_user_images(self.workload_images)
        except ValueError as err:
            problems.append(str(err))

        try:
            impl_registry.implementation(self.implementation)
        except Exception as err:
            problems.append(str(err))
        return problems

    # --- the selection ----------------------------------------------------------------------------
    def selected_or_empty(self) -> list[models.Scenario]:
        """Every scenario under the configured paths, loaded once per config."""
        key = tuple(str(p) for p in self.scenarios)
        if self._loaded is None or self._loaded[0] != key:
            from conformance.scenario import loader

            found, problems = loader.load_tree([pathlib.Path(p) for p in self.scenarios if pathlib.Path(p).exists()])
            self._loaded = (key, found, problems)
        return self._loaded[1]

    def preloaded(self) -> dict[pathlib.Path, tuple[models.Scenario, list[loader.Problem]]]:
        """The selected scenarios by file, with each file's warnings: what pytest collects."""
        self.selected_or_empty()
        assert self._loaded is not None
        warnings: dict[str, list[loader.Problem]] = {}
        for problem in self._loaded[2]:
            if not problem.is_error:
                warnings.setdefault(problem.file, []).append(problem)
        return {sc.path.resolve(): (sc, warnings.get(str(sc.path), [])) for sc in self.selected()}

    def _in_suites(self) -> list[models.Scenario]:
        found = self.selected_or_empty()
        return [sc for sc in found if sc.suite in self.suites] if self.suites else found

    def selected(self) -> list[models.Scenario]:
        found = self._in_suites()
        if self.shard:
            found = shards.pick(found, lambda sc: sc.id, shards.parse(self.shard), self.shard_durations())
        return found

    def shard_durations(self) -> dict[str, float]:
        """The durations a `--shard` split balances: `--durations` only, never a folder's last
        run, so every shard of one CI run, on whatever machine, cuts the same split."""
        if self.durations is None:
            return {}
        if self._shard_durations is None:
            from conformance.report import json_report

            self._shard_durations = json_report.durations(self.durations)
        return self._shard_durations

    def shard_plan(self) -> str:
        """The digest of the whole split this shard belongs to ("" without --shard)."""
        if not self.shard:
            return ""
        found = self._in_suites()
        return shards.plan([sc.id for sc in found], shards.parse(self.shard).count, self.shard_durations(), self.keyword)

    def selected_paths(self) -> list[str]:
        return sorted(str(sc.path) for sc in self.selected())

    def workers(self) -> int:
        """The number of workers the run uses (`auto` resolved for this machine and selection)."""
        jobs = parallel.parse_jobs(str(self.jobs))
        if jobs != parallel.AUTO:
            return int(jobs)
        # After -k: a run of one scenario starts one worker, whatever the paths hold.
        judged = self.keyword and self.keyword_ids is not None and self.keyword_judged == self.keyword
        # The collection holds each repeated scenario's every attempt: scenarios are counted once.
        runs = (len(set(self.keyword_ids or ())) if judged else len(self.selected())) * self.repeat
        if self.backend.name == "existing":
            return 1
        if self.backend.name == "kind":
            return parallel.auto_workers(runs, per_core=parallel.KIND_WORKERS_PER_CORE, per_worker_mib=parallel.KIND_WORKER_MIB)
        return parallel.auto_workers(runs)

    def durations_report(self) -> pathlib.Path | None:
        """The report whose durations order the long scenarios first: the one given, else the
        last whole run's under `reports`, else the reference run kept there (None: none)."""
        if self.durations is not None:
            return self.durations
        if self.reports is None:
            return None
        # The last whole run's, else a committed reference run's (a clone's reports/reference).
        for candidate in (self.reports / "latest" / "report.json", self.reports / "reference" / "report.json"):
            if candidate.is_file():
                return candidate
        return None

    # --- travelling to pytest-xdist's workers -----------------------------------------------------
    def to_json(self) -> str:
        return json.dumps(_plain(self))

    @classmethod
    def from_json(cls, text: str) -> RunConfig:
        return from_plain(json.loads(text))


def _plain(config: RunConfig) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in dataclasses.fields(config):
        if field.name.startswith("_") or not field.init:
            continue  # what a config works out for itself travels no further
        value = getattr(config, field.name)
        if isinstance(value, BackendConfig):
            value = dataclasses.asdict(value)
        elif isinstance(value, pathlib.Path):
            value = str(value)
        elif isinstance(value, (list, tuple)):
            value = [str(v) for v in value]
        out[field.name] = value
    return out


def from_plain(data: Mapping[str, Any]) -> RunConfig:
    values = dict(data)
    values["backend"] = BackendConfig(**values.get("backend", {}))
    values["scenarios"] = tuple(pathlib.Path(p) for p in values.get("scenarios", ()))
    values["suites"] = tuple(values.get("suites", ()))
    for name in ("reports", "durations"):
        if values.get(name) is not None:
            values[name] = pathlib.Path(values[name])
    return RunConfig(**values)


# --- the same fields as the command line's flags ------------------------------------------------------
def from_args(cls: type[Config], args: Mapping[str, Any], prefix: str = "") -> Config:
    """A config from `vck`'s parsed flags (`vars(namespace)`): each field takes the flag whose
    `dest` is its path in the config (`implementation`, `backend.kube_version`), and a field whose
    default is itself a config (`backend`) is filled the same way. A field without such a flag, or
    one left unset (None, or an empty list), keeps its default; the config's own `validate` judges
    the values."""
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cast(Any, cls)):
        if not field.init:
            continue
        path = prefix + field.name
        if field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
            if dataclasses.is_dataclass(default):
                values[field.name] = from_args(type(default), args, f"{path}.")
                continue
        value = args.get(path)
        if value is None or (isinstance(value, list) and not value):
            continue
        values[field.name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)


# --- the same fields as pytest options ---------------------------------------------------------------
def option_fields() -> list[tuple[str, dataclasses.Field[Any], Option]]:
    """(owner, field, option) for every field given as a `--vck-*` option; owner is "run" or
    "backend"."""
    found = []
    for owner, cls in (("backend", BackendConfig), ("run", RunConfig)):
        for field in dataclasses.fields(cls):
            opt = field.metadata.get(OPTION)
            if opt is not None:
                found.append((owner, field, opt))
    return found


def parse_option(opt: Option, value: Any) -> Any:
    """A pytest option's value as the field holds it."""
    if value is None:
        return None
    if opt.kind == "int":
        return int(value)
    if opt.kind == "float":
        return float(value)
    if opt.kind == "path":
        return pathlib.Path(value)
    if opt.kind == "paths":
        return tuple(pathlib.Path(v) for v in value)
    return str(value)


def from_options(values: Mapping[str, Any]) -> RunConfig:
    """The configuration of a plain `pytest` run, from its `--vck-*` options by field name
    (a name absent or None keeps the field's default; an empty `paths` too)."""
    run: dict[str, Any] = {}
    backend: dict[str, Any] = {}
    for owner, field, opt in option_fields():
        raw = values.get(field.name)
        if raw is None or (opt.kind == "paths" and not raw):
            continue
        (backend if owner == "backend" else run)[field.name] = parse_option(opt, raw)
    # A plain pytest run writes reports only when asked to (--vck-report-dir).
    run.setdefault("reports", None)
    return RunConfig(backend=BackendConfig(**backend), **run)
