"""An RSA key pair in the formats ssh reads, and the ssh config naming every pod of a job."""

from __future__ import annotations

from typing import Any, Callable

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


def generate(bits: int = 2048) -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode() + "\n"
    return private, public


def config(job: dict[str, Any], hosts: Callable[[dict[str, Any], dict[str, Any]], list[str]]) -> str:
    lines = ["StrictHostKeyChecking no", "UserKnownHostsFile /dev/null"]
    for task in job["spec"].get("tasks") or []:
        for host in hosts(job, task):
            lines += [f"Host {host.split('.')[0]}", f"  HostName {host}"]
    return "\n".join(lines) + "\n"
