package plugins

import (
	"volcano.sh/volcano/pkg/scheduler/framework"
	"volcano.sh/volcano/pkg/scheduler/plugins/gang"
	"volcano.sh/volcano/pkg/scheduler/plugins/network-topology-aware"
	tasktopology "volcano.sh/volcano/pkg/scheduler/plugins/task-topology"
)

func init() {
	framework.RegisterPluginBuilder(gang.PluginName, gang.New)
	framework.RegisterPluginBuilder(networktopologyaware.PluginName, networktopologyaware.New)
	framework.RegisterPluginBuilder(tasktopology.PluginName, tasktopology.New)
}
