"""The images the workloads suite runs in real containers, built here from Debian's packages and
PyPI (no registry), or named by the user (`--workload-images NAME=IMAGE,...`).

A scenario names a workload image by a placeholder, `vck.workload/<name>` (for example
`image: vck.workload/mpi`); the kit puts the image it built for that recipe (or the user's) in
its place when it applies the scenario's objects, and loads it into the kind cluster's real
workers first. The recipes pin every package: Debian's at the versions of Debian 12 ("bookworm")
and PyPI's with all their dependencies, so an image is made of the same files wherever it is
built. Its tag is the digest of its recipe, so it is rebuilt only when the recipe changes.

- `mpi`: Open MPI, mpi4py, OpenSSH (the ssh plugin's keys, sshd on the workers) and Python: also
  what the TensorFlow-style and exit-code workloads run (they need only Python);
- `torch`: PyTorch (CPU, Debian's python3-torch, gloo), apart because it is most of a gigabyte:
  a run that does not train does not load it;
- `ray`: Python with Ray from PyPI (`ray[client]`: the plugin's head command starts the client
  server), apart from torch: pip's numpy would shadow Debian's, which Debian's torch is built
  against.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pathlib
import subprocess
import sys
import tempfile
from typing import Any, Callable, Iterable, Mapping

from conformance.cluster import base, docker, kind_image

Progress = Callable[[str], None]
PLACEHOLDER = "vck.workload/"
# The wheels Debian 12 (glibc 2.36, x86-64) runs; pure-Python ones fit any.
WHEEL_PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_28_x86_64", "linux_x86_64")
PYTHON = "python3=3.11.2-1+b1"
PROCPS = "procps=2:4.0.2-3"


@dataclasses.dataclass(frozen=True)
class Recipe:
    """One image: Debian packages at pinned versions (`name=version`, Recommends left out) and
    PyPI packages with every dependency pinned (`name==version`, installed without resolving)."""

    name: str
    debian: tuple[str, ...]
    pypi: tuple[str, ...] = ()
    # Dockerfile lines after the root filesystem and the PyPI packages.
    extra: str = ""

    def tag(self) -> str:
        digest = hashlib.sha256(repr((kind_image.SUITE, self.debian, self.pypi, self.extra, DOCKERFILE)).encode()).hexdigest()[:12]
        return f"vck-workload-{self.name}:{digest}"


DOCKERFILE = """\
FROM {base}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY site/ /usr/local/lib/python3.11/dist-packages/
{extra}
"""

RECIPES: dict[str, Recipe] = {
    "mpi": Recipe(
        "mpi",
        debian=(
            PYTHON, "openmpi-bin=4.1.4-3+b1", "python3-mpi4py=3.1.4-2+b2",
            "openssh-server=1:9.2p1-2+deb12u10", "openssh-client=1:9.2p1-2+deb12u10", PROCPS, "iproute2=6.1.0-3",
        ),
        # sshd needs its privilege-separation folder; Open MPI refuses root unless told twice.
        extra="RUN mkdir -p /run/sshd && ssh-keygen -A\nENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm_rsh_agent=ssh",
    ),
    "torch": Recipe("torch", debian=(PYTHON, "python3-torch=1.13.1+dfsg-4", PROCPS)),
    "ray": Recipe(
        "ray",
        debian=(PYTHON, "ca-certificates=20250419~deb12u2", PROCPS),
        pypi=(
            "ray==2.52.1", "grpcio==1.85.3", "msgpack==1.2.4", "click==8.5.1", "protobuf==7.36.2", "filelock==4.3.1", "jsonschema==4.26.0",
            "attrs==26.1.0", "jsonschema-specifications==2025.9.1", "referencing==0.37.0", "rpds-py==2026.9.1",
            "typing_extensions==4.16.0", "packaging==26.4", "PyYAML==6.0.4", "requests==2.34.2", "charset-normalizer==3.5.3",
            "idna==3.20", "urllib3==2.8.0", "certifi==2026.10.19.post1",
        ),
        # pip's own `ray` script names this machine's interpreter: the image's calls its own.
        extra="RUN printf '#!/usr/bin/python3\\nimport sys\\nfrom ray.scripts.scripts import main\\nsys.exit(main())\\n' > /usr/local/bin/ray && chmod 0755 /usr/local/bin/ray",
    ),
}


def as_versions(images: Mapping[str, str]) -> dict[str, str]:
    """The images real workloads ran in, as a report states them beside the other versions (the
    kit's tags carry their recipe's digest)."""
    return {f"workload image {name}": image for name, image in sorted(images.items())}


def parse_user_images(text: str | None) -> dict[str, str]:
    """`--workload-images mpi=registry/x:1,ray=rayproject/ray:2.52.1`: the user's image per recipe."""
    chosen: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, sep, image = part.partition("=")
        if not sep or not image.strip():
            raise ValueError(f"--workload-images {text!r}: expected NAME=IMAGE[,NAME=IMAGE], got {part!r}")
        if name.strip() not in RECIPES:
            raise ValueError(f"--workload-images: no workload image {name.strip()!r}; the kit's are {', '.join(sorted(RECIPES))}")
        chosen[name.strip()] = image.strip()
    return chosen


def placeholders(manifest: Any) -> set[str]:
    """The recipe names a manifest's containers ask for (`image: vck.workload/<name>`)."""
    found: set[str] = set()
    for image in _images(manifest):
        if image.startswith(PLACEHOLDER):
            found.add(image[len(PLACEHOLDER):])
    return found


def _images(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "image" and isinstance(value, str):
                yield value
            else:
                yield from _images(value)
    elif isinstance(node, list):
        for item in node:
            yield from _images(item)


def requests_resource(manifest: Any, resource: str) -> bool:
    """Whether a container in the manifest asks for this resource (`nvidia.com/gpu`)."""
    if isinstance(manifest, dict):
        for key, value in manifest.items():
            if key in ("requests", "limits") and isinstance(value, dict) and resource in value:
                return True
            if requests_resource(value, resource):
                return True
    elif isinstance(manifest, list):
        return any(requests_resource(item, resource) for item in manifest)
    return False


def substitute(manifest: Any, images: Mapping[str, str]) -> Any:
    """The manifest with each placeholder image replaced by the image given for its recipe (a
    placeholder with no image given is left as it is: the kubelet then fails to pull it, which the
    scenario reports)."""
    if isinstance(manifest, dict):
        out = {}
        for key, value in manifest.items():
            if key == "image" and isinstance(value, str) and value.startswith(PLACEHOLDER):
                out[key] = images.get(value[len(PLACEHOLDER):], value)
            else:
                out[key] = substitute(value, images)
        return out
    if isinstance(manifest, list):
        return [substitute(item, images) for item in manifest]
    return manifest


def build(engine: docker.Engine, name: str, progress: Progress) -> str:
    """The recipe's image, built here unless this engine already has it; returns its tag."""
    recipe = RECIPES[name]
    tag = recipe.tag()
    if engine.has_image(tag):
        return tag
    rootfs = kind_image.rootfs(engine, f"vck/workload-{name}-rootfs", recipe.debian, progress)
    progress(f"workloads: image {tag}")
    with tempfile.TemporaryDirectory(prefix=f"vck-workload-{name}-") as tmp:
        context = pathlib.Path(tmp)
        (context / "site").mkdir()
        if recipe.pypi:
            installed = subprocess.run(
                [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--only-binary", ":all:",
                 # The image's Python (Debian 12's 3.11), whatever runs the kit.
                 "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
                 *(f"--platform={tag}" for tag in WHEEL_PLATFORMS), "--target", str(context / "site"), *recipe.pypi],
                capture_output=True, text=True,
            )
            if installed.returncode != 0:
                raise base.ClusterError(f"pip could not install the {name} workload's packages:\n{installed.stderr[-1500:]}")
        (context / "Dockerfile").write_text(DOCKERFILE.format(base=rootfs, extra=recipe.extra))
        engine.run(["build", "-q", "-t", tag, str(context)], timeout=3600)
    return tag
