package allocate

type Action struct{}

func New() *Action { return &Action{} }

func (a *Action) Name() string {
	return "allocate"
}
