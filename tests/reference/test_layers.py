"""The reference's import contracts (pyproject.toml, checked by `make lint`) hold on the code, and
break, naming the import, on a copy of the reference with forbidden imports added: the framework
reaching up to a plugin, the conf reaching up to the framework's registry, and the queue webhook
reaching into the scheduler's model."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
LINT_IMPORTS = pathlib.Path(sys.executable).with_name("lint-imports")
SCHEDULER_LAYERS = "The reference scheduler's layers"
NO_SCHEDULER = "The reference's controllers and webhooks never import its scheduler"
# (module file, import added to it, the import lint-imports must name)
FORBIDDEN = (
    ("scheduler/framework/session.py", "from reference_scheduler.scheduler.plugins import gang",
     "reference_scheduler.scheduler.framework.session -> reference_scheduler.scheduler.plugins.gang"),
    ("scheduler/conf.py", "from reference_scheduler.scheduler.framework import registry",
     "reference_scheduler.scheduler.conf -> reference_scheduler.scheduler.framework.registry"),
    ("webhooks/validate_queue.py", "from reference_scheduler.scheduler.api import job_info",
     "reference_scheduler.webhooks.validate_queue -> reference_scheduler.scheduler.api.job_info"),
)


def lint_imports(cwd: pathlib.Path, pythonpath: pathlib.Path | None = None) -> subprocess.CompletedProcess[str]:
    # Wide enough that lint-imports (rich) wraps no contract name nor import onto a second line.
    env = {**os.environ, "COLUMNS": "400", **({"PYTHONPATH": str(pythonpath)} if pythonpath else {})}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def verdicts(output: str) -> dict[str, str]:
    """The verdict (KEPT or BROKEN) of each of the reference's contracts named here."""
    found = {}
    for line in output.splitlines():
        for name in (SCHEDULER_LAYERS, NO_SCHEDULER):
            if line.startswith(name) and line.rstrip().endswith(("KEPT", "BROKEN")):
                found[name] = line.rsplit(" ", 1)[-1]
    return found


def test_the_reference_contracts_hold() -> None:
    kept = lint_imports(REPO)
    assert kept.returncode == 0 and "0 broken" in kept.stdout, kept.stdout[-3000:] + kept.stderr
    assert verdicts(kept.stdout) == {SCHEDULER_LAYERS: "KEPT", NO_SCHEDULER: "KEPT"}, kept.stdout[-3000:]


def test_the_reference_contracts_break_on_forbidden_imports(tmp_path: pathlib.Path) -> None:
    shutil.copytree(REPO / "reference_scheduler", tmp_path / "reference_scheduler", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    for module, statement, _ in FORBIDDEN:
        path = tmp_path / "reference_scheduler" / module
        path.write_text(path.read_text() + f"\n{statement}  # noqa: E402\n")
    # The copy comes first on the path, so it is the `reference_scheduler` the contracts are checked on.
    broken = lint_imports(tmp_path, pythonpath=tmp_path)
    assert broken.returncode != 0, broken.stdout[-3000:]
    assert verdicts(broken.stdout) == {SCHEDULER_LAYERS: "BROKEN", NO_SCHEDULER: "BROKEN"}, broken.stdout[-5000:]
    for _, _, named in FORBIDDEN:
        assert named in broken.stdout, broken.stdout[-5000:]
