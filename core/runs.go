package core

// activeRuns are a runtime's active runs by id. The common case, one run
// at a time, takes no string hash and no map insert and delete, which the
// wasm module pays dearly for: the first run sits in a field of its own,
// the others in a map.
type activeRuns struct {
	one  *Run
	byID map[string]*Run
}

func (a *activeRuns) len() int {
	n := len(a.byID)
	if a.one != nil {
		n++
	}
	return n
}

// get returns the active run with id, or nil. An empty map answers
// without hashing id.
//
//go:noinline
func (a *activeRuns) get(id string) *Run {
	if a.one != nil && a.one.id == id {
		return a.one
	}
	return a.byID[id]
}

// add registers r, whose id no active run has.
//
//go:noinline
func (a *activeRuns) add(r *Run) {
	if a.one == nil {
		a.one = r
		return
	}
	if a.byID == nil {
		a.byID = make(map[string]*Run)
	}
	a.byID[r.id] = r
}

// remove unregisters r.
//
//go:noinline
func (a *activeRuns) remove(r *Run) {
	if a.one == r {
		a.one = nil
	} else {
		delete(a.byID, r.id)
	}
}

// all returns the active runs in a new slice.
//
//go:noinline
func (a *activeRuns) all() []*Run {
	runs := make([]*Run, 0, len(a.byID)+1)
	if a.one != nil {
		runs = append(runs, a.one)
	}
	for _, r := range a.byID {
		runs = append(runs, r)
	}
	return runs
}
