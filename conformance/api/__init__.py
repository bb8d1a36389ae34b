"""The kit as a library: one function per operation, each taking a config dataclass (with
`validate()` where a config can be wrong), in sonobuoy's shape; one module per kind of operation.

    run(RunConfig)                  the conformance run: scenarios, verdicts, reports (run.py)
    run_matrix(MatrixConfig)        one run per implementation, and their verdicts side by side
    list_scenarios(ListConfig)      validate_scenarios(ValidateConfig)   new_scenario(NewConfig)
    cluster_up/down/status(ClusterConfig)   list_clusters()   prune_clusters(PruneConfig)
    install_toolchain(ToolchainConfig)      toolchain_status()
    kind_image(KindImageConfig)     bench_scheduler(bench.BenchConfig)   diff_runs(DiffConfig)
    merge_reports(MergeConfig)      the shards of one run (`vck run --shard K/N`) as one run
    explain_run(ExplainConfig)      a run's failures in the terminal: checks and their timeline
    dev_up/dev_status/dev_down(DevConfig)   run_dev(RunConfig)   a warm dev session (dev.py)

The run's configuration (`RunConfig`, composed of a `BackendConfig`) is declared and validated in
conformance/config.py. `vck` (cli.py) only parses flags, calls one of these and prints what it
returns; `bridge.py` is how a run and pytest hand each other what they need, in-process.
"""

from __future__ import annotations

from conformance.api.clusters import (
    ClusterConfig,
    ClusterInfo,
    PruneConfig,
    cluster_down,
    cluster_status,
    cluster_up,
    list_clusters,
    prune_clusters,
)
from conformance.api.dev import (
    DevConfig,
    DevError,
    DevRun,
    DevStatus,
    dev_down,
    dev_status,
    dev_up,
    list_sessions,
    prune_sessions,
    run_dev,
    watch,
)
from conformance.api.matrix import MatrixConfig, MatrixOutcome, run_matrix
from conformance.api.run import (
    RunOutcome,
    WrittenRun,
    keyword_problems,
    new_run_id,
    preflight,
    problems,
    pytest_args,
    run,
    write,
)
from conformance.api.scenarios import (
    ListConfig,
    NewConfig,
    ValidateConfig,
    list_scenarios,
    new_scenario,
    validate_scenarios,
)
from conformance.api.tools import (
    DiffConfig,
    DiffOutcome,
    ExplainConfig,
    KindImageConfig,
    MergeConfig,
    MergeOutcome,
    ToolchainConfig,
    bench_scheduler,
    diff_runs,
    explain_run,
    install_toolchain,
    kind_image,
    merge_reports,
    toolchain_status,
)
from conformance.config import (
    DEFAULT_REPORTS,
    DEFAULT_SCENARIOS,
    KIT_VERSION,
    BackendConfig,
    RunConfig,
)

__all__ = [
    "DevConfig", "DevError", "DevRun", "DevStatus", "dev_down", "dev_status", "dev_up", "list_sessions", "prune_sessions", "run_dev", "watch",
    "BackendConfig", "ClusterConfig", "ClusterInfo", "DEFAULT_REPORTS", "DEFAULT_SCENARIOS", "DiffConfig", "DiffOutcome", "ExplainConfig", "explain_run", "KIT_VERSION",
    "KindImageConfig", "ListConfig", "MatrixConfig", "MatrixOutcome", "MergeConfig", "MergeOutcome", "merge_reports", "run_matrix", "NewConfig", "PruneConfig", "RunConfig", "RunOutcome", "ToolchainConfig", "ValidateConfig",
    "WrittenRun", "bench_scheduler", "cluster_down", "cluster_status", "cluster_up", "diff_runs", "install_toolchain", "keyword_problems",
    "kind_image", "list_clusters", "list_scenarios", "new_run_id", "new_scenario", "preflight", "problems", "prune_clusters", "pytest_args",
    "run", "toolchain_status", "validate_scenarios", "write",
]
