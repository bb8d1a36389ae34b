"""The ssh plugin: a key pair shared by a job's pods, so they can ssh to each other (mpi needs it).

Upstream: pkg/controllers/job/plugins/ssh/ssh.go (names: const.go).
"""

from __future__ import annotations

import argparse
import dataclasses

from reference_scheduler.controllers.job.plugins import keys
from reference_scheduler.controllers.job.plugins.base import (
    Obj,
    Plugin,
    containers,
    owned,
    parse_flags,
    task_hosts,
)

NAME = "ssh"


@dataclasses.dataclass
class Ssh(Plugin):
    """A Secret `<job>-ssh` with a fresh RSA key pair, authorized_keys and an ssh config naming
    every pod, mounted at /root/.ssh (or --ssh-key-file-path)."""

    def __post_init__(self) -> None:
        def define(p: argparse.ArgumentParser) -> None:
            p.add_argument("--ssh-key-file-path", default=keys.SSH_PATH)
            p.add_argument("--ssh-private-key", default="")
            p.add_argument("--ssh-public-key", default="")

        self.flags = parse_flags(self.name, self.args, define)

    def secret_name(self, job: Obj) -> str:
        return f"{job['metadata']['name']}-ssh"

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        name = self.secret_name(job)
        files = [keys.SSH_PRIVATE, keys.SSH_PUBLIC, keys.SSH_AUTHORIZED, keys.SSH_CONFIG]
        mode = 0o600 if self.flags.ssh_key_file_path == keys.SSH_PATH else 0o644
        pod["spec"].setdefault("volumes", []).append({
            "name": name,
            "secret": {"secretName": name, "defaultMode": mode, "items": [{"key": f, "path": f".ssh/{f}"} for f in files]},
        })
        for c in containers(pod):
            c.setdefault("volumeMounts", []).append({"name": name, "mountPath": self.flags.ssh_key_file_path, "subPath": ".ssh"})

    def objects(self, job: Obj) -> list[Obj]:
        from reference_scheduler.controllers.job.plugins import sshkeys

        private, public = (self.flags.ssh_private_key, self.flags.ssh_public_key) if self.flags.ssh_private_key else sshkeys.generate()
        config = sshkeys.config(job, task_hosts)
        data = {keys.SSH_PRIVATE: private, keys.SSH_PUBLIC: public, keys.SSH_AUTHORIZED: public, keys.SSH_CONFIG: config}
        # Generated once: an existing Secret is never regenerated (the pods already mount it).
        return [owned(job, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": self.secret_name(job)}, "type": "Opaque", "stringData": data, keys.CREATE_ONLY: True})]
