"""`vck new SUITE NAME`: a scenario file to start from, valid as written."""

from __future__ import annotations

import pathlib
import re

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

TEMPLATE = """\
id: {suite}-{name}
suite: {suite}
title: TODO one sentence saying what behavior this proves
level: MUST            # MUST or SHOULD (RFC 2119): how binding the documented behavior is
description: |
  TODO what the scenario does and why the expectation follows from the cited behavior.
cites:
  - source: pkg/scheduler/plugins/gang/gang.go   # or seed: NNN_xxxxxxxxxxxxxxxx.txt with section, or doc: https://...
requires: [plugin:gang]
cluster:
  nodes:
    - {{count: 2, cpu: "4", memory: 16Gi}}
scheduler:
  actions: "enqueue, allocate, backfill"
  tiers:
    - plugins:
        - name: priority
        - name: gang
    - plugins:
        - name: predicates
        - name: proportion
steps:
  - apply:
      apiVersion: batch.volcano.sh/v1alpha1
      kind: Job
      metadata: {{name: example}}
      spec:
        schedulerName: volcano
        minAvailable: 2
        tasks:
          - name: worker
            replicas: 2
            template:
              spec:
                restartPolicy: Never
                containers:
                  - {{name: main, image: busybox, resources: {{requests: {{cpu: "1"}}}}}}
expect:
  - describe: both pods run
    pods: {{select: {{job: example}}, phase: Running, count: 2}}
    within: 30s
"""


class ScaffoldError(ValueError):
    pass


def new_scenario(root: pathlib.Path, suite: str, name: str) -> pathlib.Path:
    for label, value in (("suite", suite), ("name", name)):
        if not _NAME.match(value):
            raise ScaffoldError(f"{label} {value!r} should be lower case letters, digits and '-' (a DNS-1123 label)")
    path = root / suite / f"{name}.yaml"
    if path.exists():
        raise ScaffoldError(f"{path} exists already; pick another name")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TEMPLATE.format(suite=suite, name=name))
    return path
