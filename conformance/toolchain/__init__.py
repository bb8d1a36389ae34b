"""The pinned Kubernetes toolchain the embedded cluster runs on, resolved into a cache outside the repo."""
