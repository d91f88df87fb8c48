package core

// Context returns the context of the turn's run: done once the run is
// cancelled (CancelRun, from any path), times out or ends. A host that
// awaits a model or tool answer in a goroutine of its own stops waiting
// when it is done and calls Next: the call that was out is abandoned,
// and the run ends with its stop error.
func (tn *Turn) Context() Context { return tn.run.ctx }

// Hold blocks until the turn holds its session, as Execute waits for it,
// or until its run is stopped first; Next then answers no ActionWait. It
// is for a host that drives a turn from a goroutine that may block (the
// module's JavaScript API); a host that cannot block calls Next again
// once a run on the session has ended.
func (tn *Turn) Hold() {
	r := tn.run
	if tn.ended || tn.holds {
		return
	}
	if r.rt.store.hold(r.lane, r.ctx) {
		tn.holds = true
		r.startTimeout()
	}
}
