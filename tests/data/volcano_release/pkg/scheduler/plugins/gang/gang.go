package gang

const PluginName = "gang"
