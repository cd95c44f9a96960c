package sandbox

// GrastatePath is where node n keeps its grastate.dat (for its agent).
func (s *State) GrastatePath(n Node) string { return s.grastate(n) }
