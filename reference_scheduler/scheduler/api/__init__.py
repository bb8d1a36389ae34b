"""The scheduler's in-memory model of one cycle: jobs, tasks, nodes, queues, resources."""
