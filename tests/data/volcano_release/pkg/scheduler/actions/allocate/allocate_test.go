package allocate

func (f *fake) Name() string { return "not-an-action" }
