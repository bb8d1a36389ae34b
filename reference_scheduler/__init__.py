"""The kit's reference implementation of Volcano's documented behavior: a job controller and a
scheduler, run as processes against a real API server. It never imports `conformance`."""
