package tasktopology

const (
	PluginName = "task-topology"
)
