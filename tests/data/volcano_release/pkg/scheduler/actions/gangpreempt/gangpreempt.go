package gangpreempt

type Action struct{}

func New() *Action { return &Action{} }

func (gp *Action) Name() string {
	return "gangpreempt"
}
