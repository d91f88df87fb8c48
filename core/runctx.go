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
}

// closedChan is the done channel of what stopped before anyone asked for
// its channel.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// init makes the zero c the context of a run under parent.
func (c *runContext) init(parent Context) {
	c.parent = parent
	if pd := parent.Done(); pd != nil {
		c.done = make(chan struct{})
		go func() {
			select {
			case <-pd:
				c.stop(errCancelled)
			case <-c.done:
			}
		}()
	}
}

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
	c.mu.Unlock()
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
