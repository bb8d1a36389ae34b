"""Which environment variable tells a container its devices, per extended resource name.

A vendor's container runtime hook reads this variable to expose the allocated devices; the fake
plugin sets the same variable so a pod sees what it would see on real hardware, and a test can
read back which devices it was given. The value is the allocated device ids, comma-separated, in
the order the kubelet asked for them.

- `nvidia.com/gpu`: `NVIDIA_VISIBLE_DEVICES`, read by the NVIDIA container toolkit (it takes GPU
  UUIDs or indices; the fake ids stand in for UUIDs).
- `huawei.com/Ascend910` (and the other `huawei.com/Ascend*` names): `ASCEND_VISIBLE_DEVICES`,
  read by the Ascend docker runtime. The real plugin puts physical chip numbers there; the fake
  puts its device ids.
- `metax-tech.com/gpu`: `METAX_VISIBLE_DEVICES`. A stated choice, not a vendor-documented fact:
  it is the name the MetaX container runtime tooling is seen to use, and the seed documents no
  variable. Override it with `--visible-devices-env` if a runtime expects another.
- anything else: `VISIBLE_DEVICES` unless the caller names one.
"""

from __future__ import annotations

FALLBACK_ENV = "VISIBLE_DEVICES"

_BY_RESOURCE = {
    "nvidia.com/gpu": "NVIDIA_VISIBLE_DEVICES",
    "metax-tech.com/gpu": "METAX_VISIBLE_DEVICES",
}
_BY_PREFIX = {
    "huawei.com/Ascend": "ASCEND_VISIBLE_DEVICES",
}


def visible_devices_env(resource_name: str) -> str:
    """The variable a container of this resource reads its devices from (see the module doc)."""
    if resource_name in _BY_RESOURCE:
        return _BY_RESOURCE[resource_name]
    for prefix, env in _BY_PREFIX.items():
        if resource_name.startswith(prefix):
            return env
    return FALLBACK_ENV


def visible_devices_value(device_ids: list[str]) -> str:
    return ",".join(device_ids)
