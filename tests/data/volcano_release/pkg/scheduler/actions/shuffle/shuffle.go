package shuffle

const (
	Shuffle = "shuffle"
)

type Action struct{}

func New() *Action { return &Action{} }

func (s *Action) Name() string {
	return Shuffle
}
