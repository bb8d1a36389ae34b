"""What the adapters that run an implementation as processes here share (`reference`, `volcano`):
three parts (webhook, controller, scheduler), each a ManagedProcess with its log in the adapter's
workdir; health is the first part that exited; the controller and the scheduler can be held
stopped and resumed with the arguments they had (impl_base.Staged, for the bench); stopping stops
all three and removes the webhook's registrations. A subclass says how a part is spawned and how
its webhook is unregistered; it starts the parts (and waits for them) as its implementation needs.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Collection

from conformance.cluster import base
from conformance.impl import base as impl_base
from conformance.impl import processes

WEBHOOK = "webhook"
PARTS = (WEBHOOK, impl_base.CONTROLLER, impl_base.SCHEDULER)
# A held part starts over a whole workload (tens of thousands of pods to list into its caches).
RESUME_READY_TIMEOUT_S = 600.0


@dataclasses.dataclass(frozen=True)
class Launch:
    """How a part was started: its argument list (the adapter's own form) and the log line
    (a regular expression) that says it is ready."""

    args: tuple[str, ...]
    ready: str


class ThreeParts:
    # How the implementation is named in errors ("the reference", "Volcano").
    display = "the implementation"

    def __init__(self, workdir_env: str, role: str, workdir: pathlib.Path | None) -> None:
        # Where the processes' logs, confs and certificates go (impl_base.Workdir).
        self._workdirs = impl_base.Workdir(workdir_env, role, workdir)
        self.workdir = pathlib.Path("(not started)")
        self._cluster: base.ClusterHandle | None = None
        self._parts: dict[str, processes.ManagedProcess | None] = dict.fromkeys(PARTS)
        self._launched: dict[str, Launch] = {}
        self._held: set[str] = set()

    # --- what a subclass provides -----------------------------------------------------------------
    def _spawn(self, part: str, launch: Launch) -> processes.ManagedProcess:
        """Start the part's process (not waiting for it to be ready)."""
        raise NotImplementedError

    def _unregister_webhook(self, cluster: base.ClusterHandle) -> None:
        """Remove the webhook's configurations from the cluster (a leftover one with failure
        policy Fail would refuse every object it covers)."""
        raise NotImplementedError

    def _forget(self) -> None:
        """Drop the subclass's own state about running parts (the conf they run) on stop."""

    # --- parts ------------------------------------------------------------------------------------
    def _start(self, part: str, launch: Launch) -> processes.ManagedProcess:
        proc = self._spawn(part, launch)
        self._parts[part] = proc
        self._launched[part] = launch
        return proc

    def _running(self, part: str) -> processes.ManagedProcess | None:
        proc = self._parts[part]
        return proc if proc is not None and not proc.exited() else None

    # --- held parts (impl_base.Staged) ------------------------------------------------------------
    def hold(self, parts: Collection[str]) -> None:
        for part in parts:
            if part not in (impl_base.SCHEDULER, impl_base.CONTROLLER):
                raise impl_base.ImplementationError(f"{self.display} has no part {part!r} to hold; it holds {impl_base.SCHEDULER} and {impl_base.CONTROLLER}")
            proc = self._running(part)
            if proc is None:
                raise impl_base.ImplementationError(f"{self.display}'s {part} is not running: nothing to hold (ensure() first)")
            proc.stop()
            self._parts[part] = None
            self._held.add(part)

    def resume(self) -> None:
        """Start the held parts side by side with the arguments they had; return once each says
        it is ready."""
        started = [(self._start(part, self._launched[part]), self._launched[part].ready) for part in sorted(self._held)]
        self._held.clear()
        for proc, ready in started:
            proc.wait_ready(ready, RESUME_READY_TIMEOUT_S)

    # --- health and the end -----------------------------------------------------------------------
    def health(self) -> str | None:
        return processes.first_exited(self._parts[part] for part in PARTS)

    def release(self) -> None:
        """Remove a private folder of logs (an existing cluster's), once they are copied."""
        self._workdirs.release()

    def stop(self) -> None:
        for part in reversed(PARTS):
            proc = self._parts[part]
            if proc is not None:
                proc.stop()
        if self._parts[WEBHOOK] is not None and self._cluster is not None:
            self._unregister_webhook(self._cluster)
        self._parts = dict.fromkeys(PARTS)
        self._held.clear()
        self._cluster = None
        self._forget()
