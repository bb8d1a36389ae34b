"""The kind node image of a pinned Kubernetes release (`kindest/node:v1.33.2` by default): kind's
published one where it can be pulled, else built here from Debian's packages and the pinned Go
modules (`vck kind image [--kube-version 1.34]`).

`kind build node-image` cannot do it offline (it pulls its base image and the control plane's
images), so the kit does its steps itself, in the layout kind's own build produces:

1. a root filesystem from Debian's packages (`mmdebstrap`, systemd, containerd, runc, the CNI
   plugins, iptables, ...), imported into Docker; a smaller one (iptables, certificates) for the
   control plane's images;
2. kind's node files (its entrypoint, systemd units, containerd configuration: read from the
   `sigs.k8s.io/kind` Go module, never copied into this repository) laid over the first;
3. the images kubeadm asks for (kube-apiserver, kube-controller-manager, kube-scheduler,
   kube-proxy, etcd, CoreDNS, pause), each one binary on the second root filesystem; the binaries
   come from the toolchain's Go builds, pause from Kubernetes' own pause.c. The etcd, CoreDNS and
   pause versions are the ones that release's kubeadm asks for, read from its source
   (cmd/kubeadm/app/constants): kubeadm v1.34 wants etcd 3.6 and chooses etcd's flags by the
   image's tag, so another release's etcd under that tag would not do;
4. a container of (2) with kubeadm, kubelet and kubectl in /usr/bin and the images imported into
   its containerd, committed as the node image.

The image carries no CNI (kind's kindnetd image is not served here): it is labelled
`io.vck.static-cni=true`, and the kind backend then gives each node a static pod route instead
(kind.py). Where this machine's capability bounding set lacks CAP_SYS_RESOURCE (see
docker.py), containerd in the node is told not to lower oom_score_adj.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Callable, Iterator

from conformance.cluster import docker
from conformance.toolchain import cache, errors, gobuild, install, versions

Progress = Callable[[str], None]
STATIC_CNI_LABEL = "io.vck.static-cni"
SUITE = "bookworm"
# The node's packages: what kind's base image installs from Debian, plus Debian's own containerd,
# runc and CNI plugins in place of the ones kind builds.
NODE_PACKAGES = (
    "systemd", "systemd-sysv", "dbus", "conntrack", "iptables", "nftables", "iproute2", "ethtool",
    "util-linux", "mount", "kmod", "libseccomp2", "pigz", "bash", "ca-certificates", "curl", "jq",
    "procps", "containerd", "runc", "containernetworking-plugins", "socat", "ebtables",
)
# The control plane's images: kube-proxy needs iptables; the others only a root filesystem.
IMAGE_PACKAGES = ("iptables", "ca-certificates")
KUBE = "registry.k8s.io"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclasses.dataclass(frozen=True)
class KubeadmImages:
    """What a Kubernetes release's kubeadm asks for beside its own binaries (`kubeadm config images
    list`), as its cmd/kubeadm/app/constants declares them."""

    kube: str
    etcd_tag: str  # "3.6.4-0": etcd's version and the image's revision
    coredns: str  # "v1.12.1"
    pause: str  # "3.10.1"

    @property
    def etcd_version(self) -> str:
        return "v" + self.etcd_tag.split("-", 1)[0]


_CONSTANTS = {"etcd_tag": "DefaultEtcdVersion", "coredns": "CoreDNSVersion", "pause": "PauseVersion"}


def kubeadm_images(kube: str, progress: Progress) -> KubeadmImages:
    """Read them from the release's source (the k8s.io/kubernetes module at `kube`)."""
    path = kubernetes_source(kube, progress) / "cmd" / "kubeadm" / "app" / "constants" / "constants.go"
    return parse_kubeadm_constants(kube, path.read_text(), str(path))


def parse_kubeadm_constants(kube: str, text: str, where: str) -> KubeadmImages:
    found: dict[str, str] = {}
    for field, name in _CONSTANTS.items():
        match = re.search(rf'^\s*{name}\s*=\s*"([^"]+)"', text, re.MULTILINE)
        if match is None:
            raise errors.ToolchainError(f"read kubeadm's images of {kube}", f"no `{name} = \"...\"` in {where}", "report this: the node image recipe needs updating for this release")
        found[field] = match.group(1)
    return KubeadmImages(kube=kube, **found)


def control_plane_images(images: KubeadmImages) -> dict[str, tuple[str, str]]:
    """Image reference -> (binary name, where it goes in the image), as kubeadm names them."""
    k = images.kube
    return {
        f"{KUBE}/kube-apiserver:{k}": ("kube-apiserver", "/usr/local/bin/kube-apiserver"),
        f"{KUBE}/kube-controller-manager:{k}": ("kube-controller-manager", "/usr/local/bin/kube-controller-manager"),
        f"{KUBE}/kube-scheduler:{k}": ("kube-scheduler", "/usr/local/bin/kube-scheduler"),
        f"{KUBE}/kube-proxy:{k}": ("kube-proxy", "/usr/local/bin/kube-proxy"),
        f"{KUBE}/etcd:{images.etcd_tag}": ("etcd", "/usr/local/bin/etcd"),
        f"{KUBE}/coredns/coredns:{images.coredns}": ("coredns", "/coredns"),
        f"{KUBE}/pause:{images.pause}": ("pause", "/pause"),
    }


def ensure(engine: docker.Engine, image: str = versions.KIND_NODE_IMAGE, progress: Progress = _stderr, kube: str | None = versions.KUBERNETES_VERSION) -> str:
    """The node image, present in the engine: already there, pulled, or built offline as
    Kubernetes `kube`'s node. With `kube` None (a user's own image) it is never built here: the
    kit's recipe would put its own node under the user's name."""
    if engine.has_image(image):
        return image
    progress(f"kind: pulling {image}")
    pulled = engine.run(["pull", image], timeout=1800, check=False)
    if pulled.returncode == 0:
        return image
    reason = pulled.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
    if kube is None:
        raise errors.ToolchainError(f"pull {image}", reason[0][:400], "load it into the engine first (docker load) or make it pullable: the kit builds only its own kindest/node images offline (--kube-version)")
    progress(f"kind: {image} cannot be pulled ({reason[0][:160]}); building it here (about 5 to 35 minutes the first time)")
    build(engine, image, progress, kube=kube)
    return image


def build(engine: docker.Engine, image: str = versions.KIND_NODE_IMAGE, progress: Progress = _stderr, force: bool = False, kube: str = versions.KUBERNETES_VERSION) -> None:
    """Build Kubernetes `kube`'s node image here, tagged `image` (`force`: even when present; its
    parts are reused when their recipe did not change)."""
    started = time.monotonic()
    missing = [tool for tool in ("mmdebstrap", "gcc") if shutil.which(tool) is None]
    if missing:
        raise errors.ToolchainError(
            "build the kind node image",
            f"{' and '.join(missing)} not found",
            "install Debian's mmdebstrap and gcc (`make docker` as root does), or make kind's published image pullable",
        )
    with install.locked(cache.cache_dir(), "kind.lock", progress):
        if engine.has_image(image) and not force:
            return  # another process built it while this one waited
        images = kubeadm_images(kube, progress)
        progress(f"kind: kubeadm {kube} asks for etcd {images.etcd_tag}, CoreDNS {images.coredns}, pause {images.pause}")
        parts = (*versions.kind_components(kube, images.coredns), versions.etcd_component(images.etcd_version))
        binaries = {name: r.path for name, r in install.install_components(parts, root=cache.cache_dir(), progress=progress, lock=install.KIND_LOCK).items()}
        binaries.update({name: path for name, path in install.paths(kube=kube).items() if name != "etcd"})
        binaries["pause"] = pause_binary(images, progress)
        node_rootfs = rootfs(engine, "vck/kind-rootfs", NODE_PACKAGES, progress)
        images_rootfs = rootfs(engine, "vck/kind-images-rootfs", IMAGE_PACKAGES, progress)
        restrict_oom = not docker.bounding_set_has(docker.CAP_SYS_RESOURCE)
        node_base = base_image(engine, node_rootfs, restrict_oom, progress)
        with tempfile.TemporaryDirectory(prefix="vck-kind-image-") as tmp:
            folder = pathlib.Path(tmp)
            archive = component_images(engine, images_rootfs, images, binaries, folder, progress)
            commit_node(engine, node_base, binaries, archive, image, kube, progress)
    progress(f"kind: built {image} in {time.monotonic() - started:.0f}s")


def pause_binary(images: KubeadmImages, progress: Progress) -> pathlib.Path:
    """Kubernetes' pause, compiled from the pause.c of the release's k8s.io/kubernetes module."""
    out = cache.cache_dir() / "bin" / f"pause-{images.pause}" / "pause"
    if out.is_file():
        return out
    source = kubernetes_source(images.kube, progress) / "build" / "pause" / "linux" / "pause.c"
    out.parent.mkdir(parents=True, exist_ok=True)
    progress(f"pause: compiling {source}")
    proc = subprocess.run(["gcc", "-Os", "-static", f"-DVERSION=v{images.pause}", "-o", str(out.with_suffix(".part")), str(source)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise errors.ToolchainError("compile pause", proc.stderr.strip()[-800:], "install gcc and a static libc (Debian: gcc, libc6-dev)")
    out.with_suffix(".part").replace(out)
    return out


def _module_dir(module: str, progress: Progress) -> pathlib.Path:
    env = gobuild.find_go(lambda _: None)
    proc = subprocess.run([env.go, "mod", "download", "-json", module], env=env.environ(), capture_output=True, text=True, timeout=900)
    try:
        info = json.loads(proc.stdout)
    except ValueError as err:
        raise errors.ToolchainError(f"download {module}", (proc.stderr or proc.stdout).strip()[-800:], "check that the Go module proxy is reachable") from err
    if "Dir" not in info:
        raise errors.ToolchainError(f"download {module}", str(info.get("Error", info)), "check that the Go module proxy is reachable")
    return pathlib.Path(info["Dir"])


def kubernetes_source(kube: str, progress: Progress) -> pathlib.Path:
    return _module_dir(f"k8s.io/kubernetes@{kube}", progress)


def sandbox_image(progress: Progress) -> str:
    """The pause image kind's containerd configuration names (`sandbox_image`)."""
    config = kind_source(progress) / "images" / "base" / "files" / "etc" / "containerd" / "config.toml"
    found = re.search(r'sandbox_image\s*=\s*"([^"\n]+)"', config.read_text())
    if found is None:
        raise errors.ToolchainError("read kind's containerd configuration", f"no sandbox_image in {config}", "report this: the node image recipe needs updating for this kind release")
    return found.group(1)


def kind_source(progress: Progress) -> pathlib.Path:
    return _module_dir(f"{versions.KIND_MODULE}@{versions.KIND_VERSION}", progress)


def _tag(name: str, *parts: object) -> str:
    return f"{name}:{hashlib.sha256(repr(parts).encode()).hexdigest()[:12]}"


def rootfs(engine: docker.Engine, name: str, packages: tuple[str, ...], progress: Progress) -> str:
    """A Debian root filesystem with these packages, imported as an image (tagged by its recipe)."""
    tag = _tag(name, SUITE, packages)
    if engine.has_image(tag):
        return tag
    progress(f"kind: {name}: Debian {SUITE} with {len(packages)} packages (mmdebstrap)")
    # mmdebstrap's messages go to a file, not a pipe: nobody reads a pipe while `docker import`
    # runs, and a full one would stop both.
    with tempfile.TemporaryFile() as messages:
        bootstrap = subprocess.Popen(
            ["mmdebstrap", "--variant=minbase", f"--include={','.join(packages)}", SUITE, "-"],
            stdout=subprocess.PIPE, stderr=messages, stdin=subprocess.DEVNULL,
        )
        assert bootstrap.stdout is not None
        imported = subprocess.run([engine.docker, "import", "-", tag], stdin=bootstrap.stdout, capture_output=True)
        bootstrap.stdout.close()
        bootstrap.wait()
        messages.seek(0)
        stderr = messages.read()
    if bootstrap.returncode != 0 or imported.returncode != 0:
        detail = (stderr.decode(errors="replace") + imported.stderr.decode(errors="replace")).strip().splitlines()[-15:]
        raise errors.ToolchainError(f"build {name}", "\n".join(detail), "check that Debian's mirror is reachable (apt-get update works)")
    return tag


# The node image's own layer on kind's files, in the order kind's base image does it (its
# Dockerfile, images/base): services trimmed to what a node runs, kubelet and containerd enabled,
# containerd's base runtime spec generated.
NODE_DOCKERFILE = """\
FROM {base}
COPY files/usr/local/bin/ /usr/local/bin/
COPY files/kind/ /kind/
COPY files/etc/ /etc/
RUN chmod 0755 /usr/local/bin/* /kind/bin /kind/bin/* \\
 && ln -sf /usr/bin/containerd /usr/local/bin/containerd \\
 && ln -sf /usr/bin/ctr /usr/local/bin/ctr \\
 && mkdir -p /opt/cni && ln -sfn /usr/lib/cni /opt/cni/bin \\
 && find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete \\
 && rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \\
          /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \\
          /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/* \\
 && echo ReadKMsg=no >> /etc/systemd/journald.conf \\
 && systemctl enable kubelet.service containerd.service undo-mount-hacks.service \\
 && systemctl mask systemd-binfmt.service \\
 && mkdir -p /etc/kubernetes/manifests \\
 && ctr oci spec | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {{"path": "/kind/bin/mount-product-files.sh"}}' \\
    | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
"""
# Debian installs the CNI plugins in /usr/lib/cni; containerd looks where this says.
CNI_CONFIG = """
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = "/etc/cni/net.d"
"""


def base_image(engine: docker.Engine, rootfs_tag: str, restrict_oom: bool, progress: Progress) -> str:
    tag = _tag("vck/kind-base", rootfs_tag, versions.KIND_VERSION, restrict_oom, NODE_DOCKERFILE, CNI_CONFIG)
    if engine.has_image(tag):
        return tag
    progress(f"kind: node base from kind {versions.KIND_VERSION}'s node files")
    with tempfile.TemporaryDirectory(prefix="vck-kind-base-") as tmp:
        context = pathlib.Path(tmp)
        shutil.copytree(kind_source(progress) / "images" / "base" / "files", context / "files")
        for path in [context / "files", *(context / "files").rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)  # the module cache's files are read-only
        config = context / "files" / "etc" / "containerd" / "config.toml"
        text = config.read_text()
        if restrict_oom:
            # runc cannot lower oom_score_adj without CAP_SYS_RESOURCE: every pod sandbox would fail.
            text = text.replace("restrict_oom_score_adj = false", "restrict_oom_score_adj = true")
        config.write_text(text + CNI_CONFIG)
        (context / "Dockerfile").write_text(NODE_DOCKERFILE.format(base=rootfs_tag))
        engine.run(["build", "-q", "-t", tag, str(context)], timeout=1800)
    return tag


def component_images(engine: docker.Engine, rootfs_tag: str, images: KubeadmImages, binaries: dict[str, pathlib.Path], folder: pathlib.Path, progress: Progress) -> pathlib.Path:
    """Build kubeadm's images and save them into one archive for the node's containerd."""
    refs = []
    pause_ref = ""
    for ref, (name, dest) in control_plane_images(images).items():
        context = folder / name
        context.mkdir()
        shutil.copy2(binaries[name], context / name)
        base_ref = "scratch" if name == "pause" else rootfs_tag
        (context / "Dockerfile").write_text(f'FROM {base_ref}\nCOPY {name} {dest}\nENTRYPOINT ["{dest}"]\n')
        progress(f"kind: image {ref}")
        engine.run(["build", "-q", "-t", ref, str(context)], timeout=1800)
        refs.append(ref)
        pause_ref = ref if name == "pause" else pause_ref
    # containerd starts every pod's sandbox from the image its configuration names, which kind
    # pins (pause 3.10 in kind v0.29) whatever kubeadm asks for; kind's own build preloads that
    # one instead of kubeadm's, so the same pause goes in under both names.
    sandbox = sandbox_image(progress)
    if sandbox not in refs:
        engine.run(["tag", pause_ref, sandbox])
        refs.append(sandbox)
    archive = folder / "images.tar"
    engine.run(["save", "-o", str(archive), *refs], timeout=1800)
    return archive


@contextlib.contextmanager
def _container(engine: docker.Engine, image: str) -> Iterator[str]:
    cid = engine.text(["run", "-d", "--privileged", "--security-opt", "seccomp=unconfined", "--entrypoint=sleep", image, "infinity"])
    try:
        yield cid
    finally:
        engine.run(["rm", "-f", "-v", cid], check=False)


def commit_node(engine: docker.Engine, node_base: str, binaries: dict[str, pathlib.Path], archive: pathlib.Path, image: str, kube: str, progress: Progress) -> None:
    progress(f"kind: node image {image}")
    with _container(engine, node_base) as cid:
        for name in ("kubeadm", "kubelet", "kubectl"):
            engine.run(["cp", str(binaries[name]), f"{cid}:/usr/bin/{name}"])
        engine.run(["exec", cid, "sh", "-c", f"printf %s {kube} > /kind/version && mkdir -p /kind/images"])
        engine.run(["cp", str(archive), f"{cid}:/kind/images/images.tar"])
        # The images go into the node's containerd now, as kind's own build does, so a node
        # starts with everything kubeadm needs and pulls nothing.
        engine.run(["exec", cid, "bash", "-c", IMPORT_SCRIPT], timeout=1800)
        engine.run([
            "commit",
            "--change", 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]',
            "--change", 'ENV HTTP_PROXY="" HTTPS_PROXY="" NO_PROXY=""',
            "--change", f"LABEL {STATIC_CNI_LABEL}=true",
            cid, image,
        ], timeout=1800)


IMPORT_SCRIPT = """\
set -e
containerd > /tmp/containerd.log 2>&1 &
for i in $(seq 1 60); do [ -S /run/containerd/containerd.sock ] && ctr version >/dev/null 2>&1 && break; sleep 0.5; done
ctr --namespace=k8s.io images import --no-unpack --digests /kind/images/images.tar
pkill containerd
while pgrep -x containerd >/dev/null; do sleep 0.2; done
rm -rf /kind/images /tmp/containerd.log
"""


def is_static_cni(engine: docker.Engine, image: str) -> bool:
    """Whether the image is one this module built (no CNI of its own)."""
    return engine.image_label(image, STATIC_CNI_LABEL) == "true"
