"""The one place that declares which versions of the cluster's components the kit runs.

Kubernetes runs at one of a pinned set of releases (`--kube-version`), one per minor, each the
exact version the Volcano release of that minor pins in its go.mod (v1.11: 1.31.3, v1.12: 1.32.2,
v1.13: 1.33.2, v1.14: 1.34.1, v1.15: 1.35.3), so a Volcano build shares the Go module downloads
and the build cache with the cluster it is judged on. The default is v1.33.2 (the pinned Volcano
release's). etcd is the 3.5 release Kubernetes 1.33 was tested with; the API servers of every
pinned minor talk to it.
"""

from __future__ import annotations

import dataclasses
import re

KUBERNETES_VERSION = "v1.33.2"
KUBERNETES_RELEASES: dict[str, str] = {"1.31": "v1.31.3", "1.32": "v1.32.2", "1.33": "v1.33.2", "1.34": "v1.34.1", "1.35": "v1.35.3"}
# The staging modules (k8s.io/api, k8s.io/client-go, ...) are published as v0.<minor>.<patch>.
KUBERNETES_STAGING_VERSION = "v0.33.2"
# Staging modules whose pinned patch release the module proxy does not serve, per Kubernetes
# release. k8s.io/externaljwt holds only generated gRPC API types, identical across the patch
# releases of a minor; v0.33.13 is the one 0.33 release the proxy has.
KUBERNETES_STAGING_OVERRIDES: dict[str, dict[str, str]] = {"v1.33.2": {"k8s.io/externaljwt": "v0.33.13"}, "v1.32.2": {"k8s.io/externaljwt": "v0.32.13"}}


def staging_version(kube: str) -> str:
    """The staging modules' version of a Kubernetes release (v1.34.1 -> v0.34.1)."""
    return "v0." + kube.lstrip("v").split(".", 1)[1]


def kube_version(text: str) -> str:
    """A pinned Kubernetes release from what a user writes (`1.34`, `v1.34`, `v1.34.1`);
    ValueError names the pinned ones."""
    found = re.fullmatch(r"v?(\d+\.\d+)(\.\d+)?", text.strip())
    pinned = KUBERNETES_RELEASES.get(found.group(1)) if found else None
    if pinned is None or (found is not None and found.group(2) and pinned != "v" + text.strip().lstrip("v")):
        raise ValueError(f"--kube-version {text!r}: the kit runs {', '.join(KUBERNETES_RELEASES.values())} (give a minor such as 1.34)")
    return pinned


def nearest_kube(version: str) -> str:
    """The pinned release of a Kubernetes version's minor, else the nearest pinned minor (for a
    Volcano release built against a minor the kit does not pin)."""
    minor = tuple(int(n) for n in version.lstrip("v").split(".")[:2])
    pinned = {tuple(int(n) for n in k.split(".")): v for k, v in KUBERNETES_RELEASES.items()}
    return pinned[min(pinned, key=lambda m: (abs(m[1] - minor[1]) if m[0] == minor[0] else 99, -m[1]))]
ETCD_VERSION = "v3.5.21"
KWOK_VERSION = "v0.7.0"
# The oldest Go that builds all of the above (Kubernetes 1.33's go.mod says go 1.24.0).
MINIMUM_GO = (1, 24)


@dataclasses.dataclass(frozen=True)
class Component:
    """One binary of the toolchain and every way the kit knows to obtain it."""

    name: str
    version: str
    # The official release download, with {version} and {arch} placeholders ("" when there is none).
    release_url: str
    # For archives: the member path inside the archive, same placeholders. Empty for a bare binary.
    release_member: str
    # Where a checksum of the release download is published ("" when the site publishes none).
    release_sha256_url: str
    # The go-build recipe the component comes from (a key of gobuild.RECIPES).
    recipe: str
    # The Go package path built for this binary within its recipe's wrapper module.
    package: str
    # A substring that `<binary> <version_args>` prints when it is the right build.
    version_marker: str
    version_args: tuple[str, ...] = ("--version",)

    @property
    def key(self) -> str:
        """The cache folder name, unique per component and version."""
        return f"{self.name}-{self.version}"


def _kube(name: str, kube: str = KUBERNETES_VERSION) -> Component:
    url = "https://dl.k8s.io/release/{version}/bin/linux/{arch}/" + name
    return Component(
        name=name,
        version=kube,
        release_url=url,
        release_member="",
        release_sha256_url=url + ".sha256",
        recipe="kubernetes",
        package=f"k8s.io/kubernetes/cmd/{name}",
        version_marker=kube,
    )


def _kwok(name: str) -> Component:
    return Component(
        name=name,
        version=KWOK_VERSION,
        release_url="https://github.com/kubernetes-sigs/kwok/releases/download/{version}/" + name + "-linux-{arch}",
        release_member="",
        release_sha256_url="",
        recipe="kwok",
        package=f"sigs.k8s.io/kwok/cmd/{name}",
        version_marker=KWOK_VERSION.lstrip("v"),
    )


def etcd_component(version: str = ETCD_VERSION) -> Component:
    """etcd at `version`: ETCD_VERSION for the clusters the kit runs itself; the one kubeadm asks
    for in a kind node image (cluster/kind_image.py)."""
    return Component(
        name="etcd",
        version=version,
        release_url="https://github.com/etcd-io/etcd/releases/download/{version}/etcd-{version}-linux-{arch}.tar.gz",
        release_member="etcd-{version}-linux-{arch}/etcd",
        release_sha256_url="",
        recipe="etcd",
        package=".",
        version_marker=version.lstrip("v"),
    )


def components(kube: str = KUBERNETES_VERSION) -> tuple[Component, ...]:
    """The cluster toolchain with Kubernetes at `kube` (one of KUBERNETES_RELEASES' values)."""
    return (
        _kube("kube-apiserver", kube),
        _kube("kube-controller-manager", kube),
        dataclasses.replace(_kube("kubectl", kube), version_args=("version", "--client")),
        *COMPONENTS[3:],
    )


COMPONENTS: tuple[Component, ...] = (
    _kube("kube-apiserver"),
    _kube("kube-controller-manager"),
    dataclasses.replace(_kube("kubectl"), version_args=("version", "--client")),
    etcd_component(),
    _kwok("kwok"),
    _kwok("kwokctl"),
)


# Volcano, for the `volcano` implementation adapter only: never part of the cluster toolchain
# above (COMPONENTS), so a cluster start never builds it. The newest v1.13 release; v1.13's go.mod
# pins Kubernetes v1.33.2, the version the cluster runs, so the two builds share Go's caches.
VOLCANO_VERSION = "v1.13.3"
# The first release whose go.mod replaces volcano.sh/apis with a folder of its own repository
# (`=> ./staging/src/volcano.sh/apis`): it and every later one build only from a checkout of the
# tag (toolchain/volcano_source.py), never as a module.
VOLCANO_CHECKOUT_FROM = "v1.14.0"
VOLCANO_MODULE = "volcano.sh/volcano"
# The binaries the adapter runs, and their main packages inside the module (upstream: cmd/).
VOLCANO_BINARIES: tuple[tuple[str, str], ...] = (
    ("vc-scheduler", "cmd/scheduler"),
    ("vc-controller-manager", "cmd/controller-manager"),
    ("vc-webhook-manager", "cmd/webhook-manager"),
)
# `module@version` targets of a replace directive that the module proxy does not serve, and the
# release of the same minor it does. k8s.io/externaljwt holds only generated gRPC API types,
# identical across the patch releases of a minor (as for KUBERNETES_STAGING_OVERRIDES above).
# v1.12.2's and v1.13.3's builds do not load it (tidy passes either way); the substitution keeps
# a release whose module graph does load it from failing on a version the proxy lacks.
PROXY_SUBSTITUTES: dict[str, str] = {
    "k8s.io/externaljwt@v0.32.2": "v0.32.13",
    "k8s.io/externaljwt@v0.33.2": "v0.33.13",
}


# kind, for the kind backend only (like Volcano, never part of the cluster toolchain): its CLI, and
# what an offline node image is made of when kind's published one cannot be pulled
# (cluster/kind_image.py). The node image's etcd, CoreDNS and pause are the ones its kubeadm asks
# for, read from that release's cmd/kubeadm/app/constants when the image is built; the defaults
# below are kubeadm v1.33's, for callers that need only the kind CLI.
KIND_VERSION = "v0.29.0"
KIND_MODULE = "sigs.k8s.io/kind"
KIND_NODE_IMAGE = f"kindest/node:{KUBERNETES_VERSION}"


def kind_node_image(kube: str = KUBERNETES_VERSION) -> str:
    """kind's node image of a Kubernetes release, the name under which the kit builds it offline."""
    return f"kindest/node:{kube}"


COREDNS_VERSION = "v1.12.0"


def kind_components(kube: str = KUBERNETES_VERSION, coredns: str = COREDNS_VERSION) -> tuple[Component, ...]:
    """The kind CLI, and the node image's binaries that the cluster toolchain does not have:
    kubeadm, kubelet, kube-proxy and kube-scheduler at `kube`, CoreDNS at `coredns`."""
    kind = Component(
        name="kind",
        version=KIND_VERSION,
        release_url="https://kind.sigs.k8s.io/dl/{version}/kind-linux-{arch}",
        release_member="",
        release_sha256_url="https://kind.sigs.k8s.io/dl/{version}/kind-linux-{arch}.sha256sum",
        recipe="kind",
        package=KIND_MODULE,
        version_marker=f"kind {KIND_VERSION}",
        version_args=("version",),
    )
    dns = Component(
        name="coredns",
        version=coredns,
        release_url="",
        release_member="",
        release_sha256_url="",
        recipe="coredns",
        package="github.com/coredns/coredns",
        version_marker=f"CoreDNS-{coredns.lstrip('v')}",
        version_args=("-version",),
    )
    node = (
        dataclasses.replace(_kube("kubeadm", kube), version_args=("version", "-o", "short")),
        _kube("kubelet", kube),
        _kube("kube-proxy", kube),
        _kube("kube-scheduler", kube),
    )
    return (kind, *node, dns)


# helm, for `--impl volcano-helm` only (never part of the cluster toolchain): the release whose
# Kubernetes libraries are v1.33's, as the cluster's, so its build shares Go's module downloads.
HELM_VERSION = "v3.18.4"
HELM_MODULE = "helm.sh/helm/v3"


def helm_component() -> Component:
    """helm: the release download where reachable, else built from its Go module like kwokctl."""
    return Component(
        name="helm",
        version=HELM_VERSION,
        release_url="https://get.helm.sh/helm-{version}-linux-{arch}.tar.gz",
        release_member="linux-{arch}/helm",
        release_sha256_url="https://get.helm.sh/helm-{version}-linux-{arch}.tar.gz.sha256sum",
        recipe="helm",
        package=f"{HELM_MODULE}/cmd/helm",
        # `helm version --short` prints `v3.18.4` (the recipe stamps the version; a release
        # download adds `+g<commit>`).
        version_marker=HELM_VERSION,
        version_args=("version", "--short"),
    )


def volcano_components(version: str = VOLCANO_VERSION) -> tuple[Component, ...]:
    """vc-scheduler, vc-controller-manager and vc-webhook-manager of one Volcano release. Volcano
    publishes container images, not binaries: they are only ever built from Go modules."""
    return tuple(
        Component(
            name=name,
            version=version,
            release_url="",
            release_member="",
            release_sha256_url="",
            recipe="volcano",
            package=f"{VOLCANO_MODULE}/{cmd}",
            # pkg/version prints `Version: <stamped version>` (stamped by the recipe's -ldflags).
            version_marker=f"Version: {version}",
        )
        for name, cmd in VOLCANO_BINARIES
    )


def component(name: str, kube: str = KUBERNETES_VERSION) -> Component:
    """The declared component called `name` (Kubernetes' at `kube`); KeyError names the known ones."""
    for comp in components(kube):
        if comp.name == name:
            return comp
    known = ", ".join(c.name for c in COMPONENTS)
    raise KeyError(f"no toolchain component {name!r}; known: {known}")
