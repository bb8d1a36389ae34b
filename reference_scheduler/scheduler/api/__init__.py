"""The scheduler's in-memory model of one cycle: jobs, tasks, nodes, queues, HyperNodes (resource
vectors and label selectors, which the controllers and webhooks read too, are reference_scheduler.api)."""
