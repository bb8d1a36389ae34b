"""The admission webhook: Volcano's Job defaults (mutating) and rejections (validating), served
over TLS and registered with the API server by the process itself, as vc-webhook-manager does."""
