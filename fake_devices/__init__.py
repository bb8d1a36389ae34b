"""Fake GPU, NUMA and supernode devices: advertised on simulated nodes and, through a real device
plugin, on real kubelets. Never imports `conformance` or `reference_scheduler`."""
