"""Volcano's three images, built here when no registry serves them: for `volcano-manifests` and
`volcano-helm` on a kind cluster where the user names no images.

Volcano's own Dockerfiles (installer/dockerfile/*/Dockerfile in the module) compile each binary
in a golang image and copy it onto alpine; the webhook manager's image also carries openssl,
kubectl and installer/dockerfile/webhook-manager/gen-admission-secret.sh, which the chart's
admission-init Job runs to make the webhook's certificate. The kit builds the same shapes without
a registry: the binaries the `volcano` adapter builds from the Go module (or VCK_VOLCANO_BIN),
on a Debian root filesystem (mmdebstrap, as kind's node image), the toolchain's kubectl, and the
script read from the same module. The script is written for alpine's shell (`[[`, `function`),
so `/bin/sh` is bash in these images.

Images are tagged by what they are made of (the binaries' and the script's digests), under
`vck.local/volcanosh`, so a user's real `docker.io/volcanosh` images are never shadowed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pathlib
import shutil
import tempfile
from typing import Callable

from conformance.cluster import docker, kind_image
from conformance.toolchain import install, volcano_resolve

Progress = Callable[[str], None]
PREFIX = "vck.local/volcanosh"
ROOTFS = "vck/volcano-rootfs"
ROOTFS_PACKAGES = ("openssl", "ca-certificates")
# Upstream: installer/dockerfile/webhook-manager/gen-admission-secret.sh
SECRET_SCRIPT = "installer/dockerfile/webhook-manager/gen-admission-secret.sh"
# Component -> the image name Volcano publishes it under (values.yaml basic.*_image_name).
IMAGE_NAMES = {"scheduler": "vc-scheduler", "controller": "vc-controller-manager", "webhook": "vc-webhook-manager"}
DOCKERFILE = """\
FROM {base}
COPY {binary} /{binary}
{extra}WORKDIR /
ENTRYPOINT ["/{binary}"]
"""
# The webhook manager's extras: kubectl and the certificate script, run by the admission-init Job
# as `./gen-admission-secret.sh` from `/`.
WEBHOOK_EXTRA = """\
COPY kubectl /usr/local/bin/kubectl
COPY gen-admission-secret.sh /gen-admission-secret.sh
RUN chmod 0755 /usr/local/bin/kubectl /gen-admission-secret.sh /{binary} && ln -sf bash /bin/sh
"""


@dataclasses.dataclass(frozen=True)
class Images:
    """Volcano's three images: `<prefix>/<image name>:<tag>`."""

    # Registry and repository prefix, such as docker.io/volcanosh or localhost:5001/me.
    prefix: str
    tag: str

    def ref(self, component: str) -> str:
        return f"{self.prefix}/{IMAGE_NAMES[component]}:{self.tag}"

    def refs(self) -> list[str]:
        return [self.ref(c) for c in IMAGE_NAMES]


def _digest(paths: list[pathlib.Path], *parts: object) -> str:
    digest = hashlib.sha256(repr(parts).encode())
    for path in paths:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def build(engine: docker.Engine, version: str, progress: Progress) -> Images:
    """The three images for Volcano `version` (built when missing); returns where they are."""
    binaries = volcano_resolve.binaries(version, progress=progress)
    script = volcano_resolve.source_dir(version, progress) / SECRET_SCRIPT
    kubectl = install.binary("kubectl", progress)
    recipe = (DOCKERFILE, WEBHOOK_EXTRA, ROOTFS_PACKAGES, kind_image.SUITE)
    tag = f"{version}-{_digest([*(binaries[name] for name in IMAGE_NAMES.values()), script, kubectl], recipe)}"
    built = Images(PREFIX, tag)
    missing = [component for component in IMAGE_NAMES if not engine.has_image(built.ref(component))]
    if not missing:
        return built
    base = kind_image.rootfs(engine, ROOTFS, ROOTFS_PACKAGES, progress)
    for component in missing:
        # Each image runs the binary of its own name (upstream: each Dockerfile's ENTRYPOINT).
        binary = IMAGE_NAMES[component]
        progress(f"volcano: image {built.ref(component)}")
        with tempfile.TemporaryDirectory(prefix="vck-volcano-image-") as tmp:
            context = pathlib.Path(tmp)
            shutil.copy2(binaries[binary], context / binary)
            extra = ""
            if component == "webhook":
                shutil.copy2(kubectl, context / "kubectl")
                shutil.copy2(script, context / "gen-admission-secret.sh")
                extra = WEBHOOK_EXTRA.format(binary=binary)
            (context / "Dockerfile").write_text(DOCKERFILE.format(base=base, binary=binary, extra=extra))
            engine.run(["build", "-q", "-t", built.ref(component), str(context)], timeout=1800)
    return built
