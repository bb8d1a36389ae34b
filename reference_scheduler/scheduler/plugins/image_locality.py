"""Image locality, one of nodeorder's scores: a node that already holds a pod's container images
scores higher, the more so the larger the images and the more nodes hold them (an image on every
node counts fully; on one node of ten, a tenth: spreading a pod's images favours no node).

As kube-scheduler's ImageLocality, which Volcano's nodeorder calls with the image states its cache
keeps from each node's status.images: per container (init containers too) the image's size times
the share of nodes holding it, summed, then scaled to 0..100 between 23 MiB and 1000 MiB per
container. An image named without a tag is the `:latest` one.

Upstream: pkg/scheduler/plugins/nodeorder/nodeorder.go (imagelocality.weight, default 1),
pkg/scheduler/cache/event_handlers.go (addNodeImageStates), kube-scheduler's
framework/plugins/imagelocality.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

MIB = 1024 * 1024
MIN_THRESHOLD = 23 * MIB
MAX_CONTAINER_THRESHOLD = 1000 * MIB
MAX_NODE_SCORE = 100


def normalised_image(name: str) -> str:
    """The name a node lists an image under: one without a tag is `:latest`."""
    return name + ":latest" if name.rfind(":") <= name.rfind("/") else name


def _images_of(node: Mapping[str, Any]) -> dict[str, int]:
    """Every name of every image the node's status lists, with the image's size."""
    out: dict[str, int] = {}
    for image in (node.get("status") or {}).get("images") or []:
        for name in image.get("names") or []:
            out.setdefault(str(name), int(image.get("sizeBytes") or 0))
    return out


class ImageStates:
    """The images of a cycle's nodes: which node holds which, and on how many nodes each is."""

    def __init__(self, nodes: Sequence[Mapping[str, Any]]) -> None:
        self.per_node = [_images_of(node) for node in nodes]
        self.spread: dict[str, int] = {}
        for images in self.per_node:
            for name in images:
                self.spread[name] = self.spread.get(name, 0) + 1
        self.total = len(nodes)

    def scores(self, pod: Mapping[str, Any]) -> np.ndarray:
        """0..100 per node for the pod's images (zeros when no node holds any)."""
        if not self.spread:
            return np.zeros(self.total)
        spec = pod.get("spec") or {}
        containers = list(spec.get("initContainers") or []) + list(spec.get("containers") or [])
        wanted = [normalised_image(str(c.get("image") or "")) for c in containers]
        top = MAX_CONTAINER_THRESHOLD * len(containers)
        out = np.zeros(self.total)
        for i, images in enumerate(self.per_node):
            total = sum(int(images[name] * self.spread[name] / self.total) for name in wanted if name in images)
            clamped = min(max(total, MIN_THRESHOLD), top)
            out[i] = MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (top - MIN_THRESHOLD) if top > MIN_THRESHOLD else 0
        return out
