"""Loading the scheduler's conf (scheduler/conf_load.py): every unknown action and plugin name is
refused, all in one error, as Volcano's unmarshalSchedulerConf refuses them."""

from __future__ import annotations

import pytest

from reference_scheduler.scheduler import conf, conf_load


def test_unknown_names_in_the_conf_are_refused_with_every_problem() -> None:
    with pytest.raises(conf.ConfError) as err:
        conf_load.parse("actions: \"enqueue, teleport\"\ntiers: [{plugins: [{name: gang}, {name: magic}]}]")
    text = str(err.value)
    assert "unknown action 'teleport'" in text and "unknown plugin 'magic'" in text
