package networktopologyaware

const (
	PluginName = "network-topology-aware"
)
