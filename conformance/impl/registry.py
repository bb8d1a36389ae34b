"""The only place that maps an `--vck-impl` value to its adapter.

    reference                    the kit's reference implementation
    reference:broken=gang,...    the same with those plugins/actions removed from its conf
    preinstalled:PATH            already running; claims read from the capabilities file PATH
"""

from __future__ import annotations

import pathlib

from conformance.impl import base, preinstalled, reference

KNOWN = ("reference", "reference:broken=NAMES", "preinstalled:CAPABILITIES_FILE")


def implementation(spec: str) -> base.Implementation:
    name, _, arg = spec.partition(":")
    if name == "reference":
        if not arg:
            return reference.Reference()
        key, _, value = arg.partition("=")
        if key != "broken" or not value:
            raise base.ImplementationError(f"--vck-impl {spec!r}: expected reference or reference:broken=PLUGIN[,ACTION...]")
        return reference.Reference(broken=tuple(v for v in value.split(",") if v))
    if name == "preinstalled":
        if not arg:
            raise base.ImplementationError("--vck-impl preinstalled needs a capabilities file: preinstalled:PATH")
        return preinstalled.Preinstalled(pathlib.Path(arg))
    raise base.ImplementationError(f"unknown implementation {spec!r}; use one of: {', '.join(KNOWN)}")
