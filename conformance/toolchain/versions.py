"""The one place that declares which versions of the cluster's components the kit runs.

Kubernetes is pinned to v1.33.2: the newest minor Volcano v1.13 supports, and the exact version
Volcano v1.13's go.mod requires, so a later Volcano build shares the Go module downloads and the
build cache with this toolchain. etcd is the 3.5 release Kubernetes 1.33 was tested with.
"""

from __future__ import annotations

import dataclasses

KUBERNETES_VERSION = "v1.33.2"
# The staging modules (k8s.io/api, k8s.io/client-go, ...) are published as v0.<minor>.<patch>.
KUBERNETES_STAGING_VERSION = "v0.33.2"
# Staging modules whose pinned patch release the module proxy does not serve. k8s.io/externaljwt
# holds only generated gRPC API types, identical across 0.33 patch releases; v0.33.13 is the one
# 0.33 release the proxy has.
KUBERNETES_STAGING_OVERRIDES: dict[str, str] = {"k8s.io/externaljwt": "v0.33.13"}
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


def _kube(name: str) -> Component:
    url = "https://dl.k8s.io/release/{version}/bin/linux/{arch}/" + name
    return Component(
        name=name,
        version=KUBERNETES_VERSION,
        release_url=url,
        release_member="",
        release_sha256_url=url + ".sha256",
        recipe="kubernetes",
        package=f"k8s.io/kubernetes/cmd/{name}",
        version_marker=KUBERNETES_VERSION,
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


COMPONENTS: tuple[Component, ...] = (
    _kube("kube-apiserver"),
    _kube("kube-controller-manager"),
    dataclasses.replace(_kube("kubectl"), version_args=("version", "--client")),
    Component(
        name="etcd",
        version=ETCD_VERSION,
        release_url="https://github.com/etcd-io/etcd/releases/download/{version}/etcd-{version}-linux-{arch}.tar.gz",
        release_member="etcd-{version}-linux-{arch}/etcd",
        release_sha256_url="",
        recipe="etcd",
        package=".",
        version_marker=ETCD_VERSION.lstrip("v"),
    ),
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
# (cluster/kind_image.py). The CoreDNS, etcd and pause versions are the ones kubeadm v1.33 asks
# for (cmd/kubeadm/app/constants: CoreDNSVersion, DefaultEtcdVersion, PauseVersion).
KIND_VERSION = "v0.29.0"
KIND_MODULE = "sigs.k8s.io/kind"
KIND_NODE_IMAGE = f"kindest/node:{KUBERNETES_VERSION}"
COREDNS_VERSION = "v1.12.0"
ETCD_IMAGE_TAG = "3.5.21-0"
PAUSE_VERSION = "3.10"


def kind_components() -> tuple[Component, ...]:
    """The kind CLI, and the node image's binaries that the cluster toolchain does not have."""
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
    coredns = Component(
        name="coredns",
        version=COREDNS_VERSION,
        release_url="",
        release_member="",
        release_sha256_url="",
        recipe="coredns",
        package="github.com/coredns/coredns",
        version_marker=f"CoreDNS-{COREDNS_VERSION.lstrip('v')}",
        version_args=("-version",),
    )
    node = (
        dataclasses.replace(_kube("kubeadm"), version_args=("version", "-o", "short")),
        _kube("kubelet"),
        _kube("kube-proxy"),
        _kube("kube-scheduler"),
    )
    return (kind, *node, coredns)


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


def component(name: str) -> Component:
    """The declared component called `name`; KeyError names the known ones."""
    for comp in COMPONENTS:
        if comp.name == name:
            return comp
    known = ", ".join(c.name for c in COMPONENTS)
    raise KeyError(f"no toolchain component {name!r}; known: {known}")
