"""`preinstalled`: an implementation already running in the cluster. The kit starts and stops
nothing; what it claims comes from a capabilities file:

    name: my-volcano-build
    version: v1.13.0-vendor.3
    release: v1.13.0          # the Volcano release it is built from (default: version)
    capabilities: [action:enqueue, action:allocate, plugin:gang, ...]

Its scheduler configuration is whatever is installed: scenarios that need plugins it does not claim
are reported as not claimed.
"""

from __future__ import annotations

import pathlib
from typing import Any, Mapping

import yaml

from conformance.cluster import base
from conformance.impl import base as impl_base
from conformance.scenario import releases


class Preinstalled:
    def __init__(self, capabilities_file: pathlib.Path) -> None:
        try:
            doc = yaml.safe_load(capabilities_file.read_text())
        except (OSError, yaml.YAMLError) as err:
            raise impl_base.ImplementationError(f"preinstalled: cannot read capabilities file {capabilities_file}: {err}") from err
        caps = doc.get("capabilities") if isinstance(doc, dict) else None
        if not isinstance(caps, list) or not all(isinstance(c, str) for c in caps):
            raise impl_base.ImplementationError(f"preinstalled: {capabilities_file}: expected a mapping with `capabilities:` a list of strings such as plugin:gang")
        self._caps = frozenset(caps)
        self.name = f"preinstalled:{doc.get('name', capabilities_file.stem)}"
        self._version = str(doc.get("version", "unknown"))
        self._release = str(doc.get("release", self._version))

    def capabilities(self) -> frozenset[str]:
        return self._caps

    def ensure(self, cluster: base.ClusterHandle, scheduler_conf: Mapping[str, Any] | None) -> None:
        return None

    def health(self) -> str | None:
        return None

    def stop(self) -> None:
        return None

    def versions(self) -> dict[str, str]:
        return {"implementation": self._version}

    def volcano_release(self) -> str | None:
        """The file's `release` (else its `version`) when it reads as a Volcano release."""
        return self._release if releases.parse_release(self._release) is not None else None
