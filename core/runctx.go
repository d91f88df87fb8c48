package core

// ErrContextDone is what a run's Context.Err returns once the run was
// cancelled, timed out or ended. Use the run's *Error for the reason.
var ErrContextDone = NewError(CodeCancelled, "run context done")

// runContext is the Context of one run. It is done when the run is
// cancelled, times out, its parent is done, or the run ends.
type runContext struct {
	parent Context
	// done is made when first asked for (a turn its host drives never
	// asks), under mu; closedChan when the context stopped before.
	done chan struct{}

	// stopped is set once err is: Err reads it without the lock while
	// the context goes on, and the turn's machine reads it alone (as
	// Err() != nil) several times a turn.
	stopped flag

	mu    mutex
	err   error  // ErrContextDone once done
	cause *Error // why the run stops: errCancelled, a timeout, or nil at its end
	stopT func() // stops the timeout's timer

	// hooks are called once the context stops (see afterStop), by the
	// goroutine that stops it; unparent stops the watch of the parent.
	hooks    []stopHook
	lastHook int
	unparent func() bool
}

// stopHook is a function afterStop arranged to call, and its number.
type stopHook struct {
	id int
	f  func()
}

// closedChan is the done channel of what stopped before anyone asked for
// its channel.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// init makes the zero c the context of a run under parent.
//
// A parent that can be done is watched through AfterStop: no goroutine
// waits on two channels, which would link the runtime's select (13 KB of
// code) into the module for this alone.
func (c *runContext) init(parent Context) {
	c.parent = parent
	if parent.Done() == nil {
		return
	}
	unparent := AfterStop(parent, func() { c.stop(errCancelled) })
	c.mu.Lock()
	if c.err == nil {
		c.unparent, unparent = unparent, nil
	}
	c.mu.Unlock()
	if unparent != nil {
		unparent() // the parent was done already
	}
}

// afterStop arranges for f to be called once c stops, by the goroutine
// that stops it and after c is done; when c has stopped already, f is
// called at once. It returns the number cancelStop takes (0 when f was
// called at once).
func (c *runContext) afterStop(f func()) int {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		f()
		return 0
	}
	c.lastHook++
	id := c.lastHook
	c.hooks = append(c.hooks, stopHook{id, f})
	c.mu.Unlock()
	return id
}

// cancelStop cancels the call of the function afterStop numbered id. It
// reports whether it did so before the call.
func (c *runContext) cancelStop(id int) bool {
	c.mu.Lock()
	ok := false
	for i := range c.hooks {
		if c.hooks[i].id == id {
			c.hooks = append(c.hooks[:i], c.hooks[i+1:]...)
			ok = true
			break
		}
	}
	c.mu.Unlock()
	return ok
}

// AfterStop arranges for f to be called once ctx is done, as
// context.AfterFunc does, and returns a function that cancels the call;
// stop reports whether it did so before f was called. A ctx whose Done is
// nil is never done: f is never called.
//
// For a run's Context, f is called by the goroutine that stops the run
// (CancelRun, its timeout, its parent, or its end) once the context is
// done, or at once when it is done already; f must not block. A host
// that waits for its own channel or the run's end alike sends on its
// channel from f, and needs no select.
//
// # Notes
//
//   - In a build with the tag agentrt_nocontext, any other ctx that can
//     be done is watched by a goroutine until it is done, even after
//     stop.
func AfterStop(ctx Context, f func()) (stop func() bool) {
	if c, ok := ctx.(*runContext); ok {
		id := c.afterStop(f)
		return func() bool { return id != 0 && c.cancelStop(id) }
	}
	if ctx.Done() == nil {
		return neverStopped
	}
	return afterDone(ctx, f)
}

func neverStopped() bool { return true }

// setTimeout makes the context stop with cause after ms milliseconds,
// using after to schedule it.
func (c *runContext) setTimeout(after AfterFunc, ms int64, cause *Error) {
	stop := after(ms, func() { c.stop(cause) })
	c.mu.Lock()
	if c.err != nil {
		stop()
	} else {
		c.stopT = stop
	}
	c.mu.Unlock()
}

// stop makes the context done; it reports whether this call did.
func (c *runContext) stop(cause *Error) bool {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return false
	}
	c.err, c.cause = ErrContextDone, cause
	c.stopped.Store(true)
	if c.stopT != nil {
		c.stopT()
	}
	if c.done == nil {
		c.done = closedChan
	} else {
		close(c.done)
	}
	hooks, unparent := c.hooks, c.unparent
	c.hooks, c.unparent = nil, nil
	c.mu.Unlock()
	if unparent != nil {
		unparent()
	}
	for _, h := range hooks {
		h.f()
	}
	return true
}

// stopCause returns why the context stopped, or nil.
func (c *runContext) stopCause() *Error {
	c.mu.Lock()
	e := c.cause
	c.mu.Unlock()
	return e
}

// Done implements Context.
func (c *runContext) Done() <-chan struct{} {
	c.mu.Lock()
	if c.done == nil {
		c.done = make(chan struct{})
	}
	d := c.done
	c.mu.Unlock()
	return d
}

// Err implements Context.
func (c *runContext) Err() error {
	if !c.stopped.Load() {
		return nil
	}
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	return err
}

// runKey is the key under which a run's context answers Value with
// itself, so that StopCause finds it through contexts derived from it.
type runKey struct{}

// Value returns the run's context itself for its own key, else the
// parent's value for key when the parent carries values (a
// context.Context does), so that values a host put on the context it
// started the run with reach its models and tools; nil otherwise.
func (c *runContext) Value(key any) any {
	if key == (runKey{}) {
		return c
	}
	return parentValue(c.parent, key)
}

// StopCause reports why the run whose context ctx is (or was derived
// from, as by context.WithTimeout) stopped: an *Error with CodeCancelled
// when it was cancelled or its parent ended, CodeTimeout when it timed
// out. It returns nil while the run goes on, after it ended normally, and
// for a ctx that is not a run's.
func StopCause(ctx Context) *Error {
	if ctx == nil {
		return nil
	}
	c, _ := valueOf(ctx, runKey{}).(*runContext)
	if c == nil {
		return nil
	}
	return c.stopCause()
}
