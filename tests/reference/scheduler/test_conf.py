"""The conf file's model (scheduler/conf.py): an action's arguments read by type, as upstream's
Arguments.GetBool reads them, and a `configurations` that is not a list of entries refused."""

from __future__ import annotations

import pytest

from reference_scheduler.scheduler import conf, conf_load
from tests.reference.scheduler_harness import PREEMPT_CONF, TOPOLOGY_PREEMPT_CONF


def test_action_arguments_are_read_by_type_as_upstream() -> None:
    parsed = conf_load.parse(TOPOLOGY_PREEMPT_CONF)
    assert parsed.action_argument("preempt", "enableTopologyAwarePreemption", False) is True
    # A string "true" is not a bool: ignored, as upstream's Arguments.GetBool ignores it.
    quoted = conf_load.parse(PREEMPT_CONF + "configurations:\n- name: preempt\n  arguments: {enableTopologyAwarePreemption: 'true'}\n")
    assert quoted.action_argument("preempt", "enableTopologyAwarePreemption", False) is False
    with pytest.raises(conf.ConfError, match="configurations"):
        conf_load.parse(PREEMPT_CONF + "configurations: [just-a-string]\n")
