"""What the scheduler, the controllers and the webhooks share about the API's objects: resource
vectors (`resource.py`), label selectors (`labels.py`) and the nodes a HyperNode's members select
(`hypernode_members.py`). It sits below the three processes and imports none of them, so the
controllers and the webhooks never reach into the scheduler's internals (an import contract in
pyproject.toml)."""
