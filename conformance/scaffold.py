"""`vck new SUITE NAME [--shape SHAPE]`: a scenario file to start from, one per common shape, each
valid and passing on the reference as written (a test runs every one), with the fields an author
must fill marked TODO: what it proves (title, description), how binding it is (level), and where
Volcano documents it (cites)."""

from __future__ import annotations

import pathlib
import re

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

# The head every shape shares: the fields to fill.
_HEAD = """\
id: {suite}-{name}
suite: {suite}
title: TODO one sentence saying what behavior this proves
level: MUST            # TODO MUST or SHOULD (RFC 2119): how binding the documented behavior is
description: |
  TODO what the scenario does, and why the expectation follows from the cited behavior.
cites:
  # TODO where Volcano documents it: source: <path in volcano-sh/volcano>, doc: <https://...>,
  # seed: <file> with section: <n>, or issue: <url>. This one is the shape's usual source.
"""

_JOB = """\
  - source: pkg/controllers/job/state/running.go
requires: ['jobcontroller:policies']
cluster:
  nodes:
    - {{count: 2, cpu: "4", memory: 16Gi}}
steps:
  - apply:
      apiVersion: batch.volcano.sh/v1alpha1
      kind: Job
      metadata: {{name: example}}
      spec:
        schedulerName: volcano
        minAvailable: 2
        tasks:
          - name: work
            replicas: 2
            template:
              spec:
                restartPolicy: Never
                containers:
                  - {{name: main, image: busybox, resources: {{requests: {{cpu: "1"}}}}}}
  - wait: {{pods: {{select: {{job: example}}, phase: Running, count: 2}}}}
    within: 30s
    describe: the job's two pods run
  - wait: {{phase: {{object: {{kind: Job, name: example}}, is: Running}}}}
    within: 30s
    describe: the job is Running
  # The simulated containers end as the scenario says: here every one succeeds.
  - end_pods: {{select: {{job: example}}, outcome: Succeeded}}
expect:
  - describe: the job is Completed
    phase: {{object: {{kind: Job, name: example}}, is: Completed}}
    within: 30s
  - describe: its phases were Pending, Running, Completed
    sequence:
      object: {{kind: Job, name: example}}
      phases: [Pending, Running, Completed]
"""

_QUEUES = """\
  - source: pkg/scheduler/plugins/proportion/proportion.go
requires: []
cluster:
  nodes:
    - {{count: 1, cpu: "4", memory: 16Gi}}
scheduler:
  actions: "enqueue, allocate, backfill"
  tiers:
    - plugins:
        - name: priority
        - name: gang
    - plugins:
        - name: predicates
        - name: proportion
setup:
  - {{apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {{name: light}}, spec: {{weight: 1}}}}
  - {{apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {{name: heavy}}, spec: {{weight: 3}}}}
steps:
  - wait: {{phase: {{object: {{kind: Queue, name: light}}, is: Open}}}}
    describe: the queue controller opened queue light (until then Jobs in it are refused)
  - wait: {{phase: {{object: {{kind: Queue, name: heavy}}, is: Open}}}}
    describe: and queue heavy
  # Held while both jobs are submitted, so that one scheduling cycle sees them both.
  - node: {{name: vck-node-0, action: cordon}}
  - apply:
      apiVersion: batch.volcano.sh/v1alpha1
      kind: Job
      metadata: {{name: in-light}}
      spec:
        schedulerName: volcano
        queue: light
        minAvailable: 1
        tasks:
          - name: work
            replicas: 4
            template:
              spec:
                restartPolicy: Never
                containers:
                  - {{name: main, image: busybox, resources: {{requests: {{cpu: "1"}}}}}}
  - apply:
      apiVersion: batch.volcano.sh/v1alpha1
      kind: Job
      metadata: {{name: in-heavy}}
      spec:
        schedulerName: volcano
        queue: heavy
        minAvailable: 1
        tasks:
          - name: work
            replicas: 4
            template:
              spec:
                restartPolicy: Never
                containers:
                  - {{name: main, image: busybox, resources: {{requests: {{cpu: "1"}}}}}}
  - wait: {{pods: {{select: {{}}, count: 8}}}}
    describe: all eight pods exist
  - node: {{name: vck-node-0, action: uncordon}}
expect:
  - describe: the node's four CPUs are shared 1 to 3, as the queues' weights
    pods: {{select: {{job: in-heavy}}, phase: Running, count: 3}}
    within: 30s
  - describe: queue light runs its one CPU's worth
    pods: {{select: {{job: in-light}}, phase: Running, count: 1}}
    within: 10s
  - describe: and it stays so
    pods: {{select: {{job: in-light}}, phase: Running, count: 1}}
    throughout: 3s
"""

_PREEMPTION = """\
  - source: pkg/scheduler/actions/preempt/preempt.go
requires: [action:preempt, plugin:priority, plugin:gang]
cluster:
  nodes:
    - {{count: 1, cpu: "4", memory: 16Gi}}
scheduler:
  actions: "allocate, preempt, backfill"
  tiers:
    - plugins:
        - name: priority
        - name: gang
        - name: conformance
    - plugins:
        - name: predicates
setup:
  - {{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {{name: {name}-high}}, value: 1000}}
  - {{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {{name: {name}-low}}, value: 10}}
steps:
  - apply:
      apiVersion: batch.volcano.sh/v1alpha1
      kind: Job
      metadata: {{name: low}}
      spec:
        schedulerName: volcano
        minAvailable: 1
        priorityClassName: {name}-low
        tasks:
          - name: work
            replicas: 4
            template:
              spec:
                restartPolicy: Never
                containers:
                  - {{name: main, image: busybox, resources: {{requests: {{cpu: "1"}}}}}}
  - wait: {{pods: {{select: {{job: low}}, phase: Running, count: 4}}}}
    within: 30s
    describe: the low-priority job fills the node
  - apply:
      apiVersion: batch.volcano.sh/v1alpha1
      kind: Job
      metadata: {{name: high}}
      spec:
        schedulerName: volcano
        minAvailable: 2
        priorityClassName: {name}-high
        tasks:
          - name: work
            replicas: 2
            template:
              spec:
                restartPolicy: Never
                containers:
                  - {{name: main, image: busybox, resources: {{requests: {{cpu: "1"}}}}}}
expect:
  - describe: the high-priority job runs
    pods: {{select: {{job: high}}, phase: Running, count: 2}}
    within: 30s
  - describe: two low-priority pods were evicted for it; two keep running
    pods: {{select: {{job: low}}, phase: Running, count: 2}}
    within: 10s
"""

# The shapes `vck new --shape` offers: the body each adds to the head, and what it shows.
SHAPES = {
    "job": (_JOB, "a Volcano Job through its phases to Completed"),
    "queues": (_QUEUES, "two weighted queues sharing a node"),
    "preemption": (_PREEMPTION, "a high-priority job preempting a low-priority one"),
}
DEFAULT_SHAPE = "job"


class ScaffoldError(ValueError):
    pass


def render(suite: str, name: str, shape: str = DEFAULT_SHAPE) -> str:
    if shape not in SHAPES:
        raise ScaffoldError(f"shape {shape!r}: use one of {', '.join(SHAPES)}")
    for label, value in (("suite", suite), ("name", name)):
        if not _NAME.match(value):
            raise ScaffoldError(f"{label} {value!r} should be lower case letters, digits and '-' (a DNS-1123 label)")
    return (_HEAD + SHAPES[shape][0]).format(suite=suite, name=name)


def new_scenario(root: pathlib.Path, suite: str, name: str, shape: str = DEFAULT_SHAPE) -> pathlib.Path:
    text = render(suite, name, shape)
    path = root / suite / f"{name}.yaml"
    if path.exists():
        raise ScaffoldError(f"{path} exists already; pick another name")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
