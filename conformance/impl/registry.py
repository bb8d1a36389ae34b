"""The only place that maps an `--vck-impl` value to its adapter.

    reference                    the kit's reference implementation
    reference:broken=gang,...    the same with those plugins/actions removed from its conf
    reference:chaos=SEED         the same, with its controller killed and restarted at random moments
    reference:scheduler-chaos=SEED  the same for its scheduler, also killed right after a gang's first bind
    preinstalled:PATH            already running; claims read from the capabilities file PATH
    volcano[:VERSION]            real Volcano (default the pinned v1.13 release), built from Go modules or a checkout of the tag
    volcano:src=PATH             real Volcano (or a fork) built from a source tree at hand
    volcano-manifests[:file=F,images=R,tag=T,kind-cluster=N]  Volcano installed in the cluster from its manifests
                                 (kind, existing; each part defaults to the pinned release's own, images built here on kind)
    volcano-helm[:chart=C,images=R,tag=T,kind-cluster=N]      the same from its helm chart
"""

from __future__ import annotations

import functools
import pathlib

from conformance.impl import base, preinstalled, reference, volcano, volcano_install

KNOWN = ("reference", "reference:broken=NAMES", "reference:chaos=SEED", "reference:scheduler-chaos=SEED", "preinstalled:CAPABILITIES_FILE", "volcano[:VERSION]", "volcano:src=PATH", volcano_install.FORMS["helm"], volcano_install.FORMS["manifests"])


def implementation(spec: str) -> base.Implementation:
    name, _, arg = spec.partition(":")
    if name == "reference":
        if not arg:
            return reference.Reference()
        key, _, value = arg.partition("=")
        if key == "broken" and value:
            return reference.Reference(broken=tuple(v for v in value.split(",") if v))
        if key == "chaos" and value.isdigit():
            return reference.Reference(chaos_seed=int(value))
        if key == "scheduler-chaos" and value.isdigit():
            return reference.Reference(scheduler_chaos_seed=int(value))
        raise base.ImplementationError(f"--vck-impl {spec!r}: expected reference, reference:broken=PLUGIN[,ACTION...], reference:chaos=SEED or reference:scheduler-chaos=SEED")
    if name == "preinstalled":
        if not arg:
            raise base.ImplementationError("--vck-impl preinstalled needs a capabilities file: preinstalled:PATH")
        return preinstalled.Preinstalled(pathlib.Path(arg))
    if name in ("volcano-helm", "volcano-manifests"):
        method = name.removeprefix("volcano-")
        try:
            spec_ = volcano_install.parse(method, arg)
        except volcano_install.InstallSpecError as err:
            raise base.ImplementationError(f"--vck-impl {spec!r}: {err}") from err
        return volcano_install.VolcanoInstalled(spec_, functools.partial(volcano.release_claims, spec_.tag), volcano_install.run_command)
    if name == "volcano":
        if arg.startswith("src="):
            return volcano.Volcano(source=pathlib.Path(arg.removeprefix("src=")))
        return volcano.Volcano(arg) if arg else volcano.Volcano()
    raise base.ImplementationError(f"unknown implementation {spec!r}; use one of: {', '.join(KNOWN)}")
