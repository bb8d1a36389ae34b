"""The Docker engine the kind backend needs: found answering, or started where the kit may.

Where `docker info` answers, that engine is used as it is. Where it does not and `dockerd` is
installed (Debian's `docker.io`; `make docker` installs it as root), the kit starts one itself,
detached, with its state and log under `$VCK_CACHE_DIR/docker/`. Installing Docker is left to the
machine's owner (or `make docker`): the kit never runs a package manager.

One quirk of some virtual machines is detected, not assumed: a capability bounding set without
CAP_SYS_RESOURCE. Docker asks for every capability for a privileged container (kind's nodes are
privileged), and runc then fails with "unable to apply caps: operation not permitted". The engine
the kit starts on such a machine runs containers through a small runc wrapper that takes
CAP_SYS_RESOURCE out of the container's spec first. Inside the node, containerd must then not try
to lower oom_score_adj either (cluster/kind_image.py builds the node image accordingly).
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
from typing import Callable, Sequence

from conformance.cluster import base
from conformance.toolchain import cache

Progress = Callable[[str], None]
CAP_SYS_RESOURCE = 24
START_TIMEOUT_S = 60.0
# The runtime name the kit's engine registers its wrapper under (and makes the default).
WRAPPED_RUNTIME = "vck-runc"

# Takes CAP_SYS_RESOURCE out of the OCI spec runc is given (a bundle's config.json, or the
# process file of an exec), then runs the real runc with the same arguments.
RUNC_WRAPPER = '''\
import json, os, sys

REAL_RUNC = {real_runc!r}


def strip(path):
    with open(path) as stream:
        spec = json.load(stream)
    process = spec.get("process", spec)
    for name, caps in (process.get("capabilities") or {{}}).items():
        if isinstance(caps, list):
            process["capabilities"][name] = [c for c in caps if c != "CAP_SYS_RESOURCE"]
    with open(path, "w") as stream:
        json.dump(spec, stream)


args = sys.argv[1:]
for i, arg in enumerate(args):
    for flag, short, suffix in (("--bundle", "-b", "config.json"), ("--process", "-p", "")):
        if arg in (flag, short) and i + 1 < len(args):
            strip(os.path.join(args[i + 1], suffix) if suffix else args[i + 1])
        elif arg.startswith(flag + "="):
            value = arg.split("=", 1)[1]
            strip(os.path.join(value, suffix) if suffix else value)
os.execv(REAL_RUNC, [REAL_RUNC, *args])
'''


class DockerUnavailable(base.ClusterError):
    """No Docker engine answers and the kit cannot start one; the message says what to do."""


@dataclasses.dataclass(frozen=True)
class Engine:
    docker: str

    def run(self, args: Sequence[str], timeout: float = 600, input_bytes: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run([self.docker, *args], input=input_bytes, capture_output=True, timeout=timeout, stdin=None if input_bytes is not None else subprocess.DEVNULL)
        if check and proc.returncode != 0:
            tail = "\n".join(proc.stderr.decode(errors="replace").strip().splitlines()[-15:])
            raise base.ClusterError(f"`docker {' '.join(args[:4])}{' ...' if len(args) > 4 else ''}` exited {proc.returncode}:\n{tail}")
        return proc

    def text(self, args: Sequence[str], timeout: float = 600) -> str:
        return self.run(args, timeout).stdout.decode().strip()

    def has_image(self, image: str) -> bool:
        return self.run(["image", "inspect", image], timeout=60, check=False).returncode == 0

    def image_label(self, image: str, label: str) -> str | None:
        proc = self.run(["image", "inspect", "--format", "{{json .Config.Labels}}", image], timeout=60, check=False)
        if proc.returncode != 0:
            return None
        labels = json.loads(proc.stdout.decode() or "null") or {}
        value = labels.get(label)
        return str(value) if value is not None else None

    def network_gateway(self, network: str) -> str | None:
        """The IPv4 gateway of a Docker network: the host's address as its containers see it."""
        proc = self.run(["network", "inspect", network, "--format", "{{json .IPAM.Config}}"], timeout=60, check=False)
        if proc.returncode != 0:
            return None
        for entry in json.loads(proc.stdout.decode() or "[]") or []:
            gateway = entry.get("Gateway", "")
            if gateway and ":" not in gateway:
                return str(gateway)
        return None


def state_dir() -> pathlib.Path:
    return cache.cache_dir() / "docker"


def bounding_set_has(capability: int, status: pathlib.Path = pathlib.Path("/proc/self/status")) -> bool:
    """Whether the capability is in this process's bounding set (true where it cannot be read)."""
    try:
        for line in status.read_text().splitlines():
            if line.startswith("CapBnd:"):
                return bool(int(line.split()[1], 16) >> capability & 1)
    except (OSError, ValueError, IndexError):
        pass
    return True


def answers(docker: str, timeout_s: float = 20.0) -> bool:
    try:
        proc = subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def ensure(progress: Progress = lambda line: print(line, file=sys.stderr, flush=True)) -> Engine:
    """An engine that answers: the one running, else one the kit starts (root, dockerd installed)."""
    docker = shutil.which("docker")
    if docker is None:
        raise DockerUnavailable(
            "the kind backend needs Docker and there is no `docker` command; install Docker "
            "(Debian: `apt-get install docker.io`, or `make docker` as root). The embedded backend needs none."
        )
    if answers(docker):
        return Engine(docker)
    dockerd = shutil.which("dockerd")
    if dockerd is None or os.geteuid() != 0:
        raise DockerUnavailable(
            "no Docker engine answers (`docker info` failed) and the kit cannot start one "
            + ("(no `dockerd`: install Debian's docker.io, or `make docker` as root)" if dockerd is None else "(starting dockerd needs root)")
            + "; start Docker and try again. The embedded backend needs none."
        )
    start(dockerd, progress)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not answers(docker, timeout_s=5):
        if time.monotonic() > deadline:
            log = state_dir() / "dockerd.log"
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:]) if log.exists() else ""
            raise DockerUnavailable(f"dockerd did not answer within {START_TIMEOUT_S:.0f}s; last lines of {log}:\n{tail}")
        time.sleep(0.5)  # polling the engine's socket until it answers: the state we wait on
    progress(f"docker: engine started (log: {state_dir() / 'dockerd.log'})")
    return Engine(docker)


def daemon_config(folder: pathlib.Path, need_wrapper: bool, real_runc: str | None) -> dict[str, object]:
    """dockerd's configuration: the runc wrapper as the default runtime where it is needed."""
    config: dict[str, object] = {}
    if need_wrapper:
        if real_runc is None:
            raise DockerUnavailable("this machine's capability bounding set lacks CAP_SYS_RESOURCE and no `runc` was found to wrap")
        wrapper = folder / "runc-without-sys-resource"
        interpreter = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else os.path.realpath(sys.executable)
        wrapper.write_text(f"#!{interpreter}\n" + RUNC_WRAPPER.format(real_runc=real_runc))
        wrapper.chmod(0o755)
        config["runtimes"] = {WRAPPED_RUNTIME: {"path": str(wrapper)}}
        config["default-runtime"] = WRAPPED_RUNTIME
    return config


def start(dockerd: str, progress: Progress) -> None:
    """dockerd in a session of its own (it outlives the kit, as a system daemon does)."""
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    need_wrapper = not bounding_set_has(CAP_SYS_RESOURCE)
    config = daemon_config(folder, need_wrapper, shutil.which("runc"))
    (folder / "daemon.json").write_text(json.dumps(config, indent=1))
    progress("docker: starting dockerd" + (" (containers run without CAP_SYS_RESOURCE: this machine's bounding set lacks it)" if need_wrapper else ""))
    with open(folder / "dockerd.log", "ab") as log:
        subprocess.Popen(
            [dockerd, "--config-file", str(folder / "daemon.json"), "--pidfile", str(folder / "dockerd.pid")],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )
