"""The ssh job plugin (reference_scheduler/controllers/job/plugins/ssh.py) in memory, against
upstream's (plugins/ssh/ssh.go): the Secret's key files mounted under .ssh; the Secret it owns, with
the keys given or generated; its flags."""

from __future__ import annotations

import pytest

from reference_scheduler.controllers.job.plugins import keys, ssh
from tests.reference.controllers.job.plugins import plugin_harness
from tests.reference.controllers.job.plugins.plugin_harness import (
    MASTER_WORKERS,
    FlagsCase,
    ObjectsCase,
    PodCase,
)

SSH_ITEMS = [{"key": f, "path": f".ssh/{f}"} for f in ("id_rsa", "id_rsa.pub", "authorized_keys", "config")]
SSH_CONFIG = "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\nHost tj-master-0\n  HostName tj-master-0.tj\nHost tj-worker-0\n  HostName tj-worker-0.tj\nHost tj-worker-1\n  HostName tj-worker-1.tj\n"

POD_CASES = [
    # ssh (plugins/ssh/ssh.go): the Secret's four files under .ssh, private to root by default.
    PodCase(
        "ssh-default-path",
        {"ssh": []},
        MASTER_WORKERS,
        "worker",
        {
            "volumes": [{"name": "tj-ssh", "secret": {"secretName": "tj-ssh", "defaultMode": 0o600, "items": SSH_ITEMS}}],
            "mounts:main": [("tj-ssh", "/root/.ssh", ".ssh")],
        },
    ),
    PodCase(
        "ssh-custom-path-readable",
        {"ssh": ["--ssh-key-file-path=/home/user/.ssh"]},
        MASTER_WORKERS,
        "master",
        {
            "volumes": [{"name": "tj-ssh", "secret": {"secretName": "tj-ssh", "defaultMode": 0o644, "items": SSH_ITEMS}}],
            "mounts:main": [("tj-ssh", "/home/user/.ssh", ".ssh")],
        },
    ),
]


@pytest.mark.parametrize("case", POD_CASES, ids=lambda c: c.id)
def test_on_pod_create(case: PodCase) -> None:
    plugin_harness.check_pod(case)


OBJECT_CASES = [
    # ssh: one Secret, created once (the keys given here; otherwise generated, below).
    ObjectsCase(
        "ssh-given-keys",
        {"ssh": ["--ssh-private-key=PRIVATE", "--ssh-public-key=PUBLIC"]},
        MASTER_WORKERS,
        {"Secret/tj-ssh": {"type": "Opaque", keys.CREATE_ONLY: True, "stringData": {"id_rsa": "PRIVATE", "id_rsa.pub": "PUBLIC", "authorized_keys": "PUBLIC", "config": SSH_CONFIG}}},
    ),
]


@pytest.mark.parametrize("case", OBJECT_CASES, ids=lambda c: c.id)
def test_objects(case: ObjectsCase) -> None:
    plugin_harness.check_objects(case)


FLAG_CASES = [
    FlagsCase("ssh-defaults", ssh.Ssh, (), {"ssh_key_file_path": "/root/.ssh", "ssh_private_key": "", "ssh_public_key": ""}),
    FlagsCase("ssh-path", ssh.Ssh, ("--ssh-key-file-path=/home/user/.ssh",), {"ssh_key_file_path": "/home/user/.ssh"}),
]


@pytest.mark.parametrize("case", FLAG_CASES, ids=lambda c: c.id)
def test_flags(case: FlagsCase) -> None:
    plugin_harness.check_flags(case)


def test_ssh_generates_a_key_pair_once_per_call() -> None:
    (secret,) = ssh.Ssh("ssh", []).objects(MASTER_WORKERS)
    data = secret["stringData"]
    assert data["id_rsa"].startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert data["id_rsa.pub"].startswith("ssh-rsa ") and data["id_rsa.pub"].endswith("\n")
    assert data["authorized_keys"] == data["id_rsa.pub"]
    assert data["config"] == SSH_CONFIG
    assert secret[keys.CREATE_ONLY] is True, "regenerated keys would not match the ones pods mounted"
