"""`python -m reference_scheduler.scheduler` (scheduler/__main__.py) refuses, with exit code 2 and
the reason on stderr, a conf that does not load and a rule to switch off it does not know."""

from __future__ import annotations

from typing import Any

from tests.reference.scheduler_harness import PREEMPT_CONF


def test_the_scheduler_process_exits_2_on_a_bad_conf(tmp_path: Any) -> None:
    import subprocess
    import sys

    bad = tmp_path / "conf.yaml"
    bad.write_text("actions: \"teleport\"\ntiers: []\n")
    proc = subprocess.run([sys.executable, "-m", "reference_scheduler.scheduler", "--scheduler-conf", str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "unknown action 'teleport'" in proc.stderr


def test_the_scheduler_refuses_an_unknown_rule_to_disable(tmp_path: Any) -> None:
    import subprocess
    import sys

    conf_file = tmp_path / "conf.yaml"
    conf_file.write_text(PREEMPT_CONF)
    proc = subprocess.run([sys.executable, "-m", "reference_scheduler.scheduler", "--scheduler-conf", str(conf_file), "--disable", "gravity"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--disable gravity: unknown" in proc.stderr and "scheduling-gates" in proc.stderr
