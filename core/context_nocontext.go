//go:build agentrt_nocontext

package core

// Context is, in a build with the tag agentrt_nocontext, what the runtime
// needs of a context: a done channel and the reason it closed. Every
// context.Context satisfies it. Without the tag, Context is
// context.Context.
//
// # Notes
//
//   - The tag keeps package context (and time, which it imports) out of
//     the module agentrt ships: about 60 KB gzip of download, and the
//     module runs no Go models of its hosts'. See docs/adr/0002.
type Context interface {
	Done() <-chan struct{}
	Err() error
}

// background is a Context that is never done.
type background struct{}

func (background) Done() <-chan struct{} { return nil }
func (background) Err() error            { return nil }

// Background returns a Context that is never done, like
// context.Background.
func Background() Context { return background{} }

type valuer interface{ Value(any) any }

//go:noinline
func parentValue(parent Context, key any) any {
	if v, ok := parent.(valuer); ok {
		return v.Value(key)
	}
	return nil
}

func valueOf(ctx Context, key any) any { return parentValue(ctx, key) }

// afterDone is AfterStop for a ctx that is not a run's: a goroutine waits
// for ctx to be done, and calls f unless stop was called first.
func afterDone(ctx Context, f func()) func() bool {
	var s struct {
		mu   mutex
		done bool
	}
	claim := func() bool {
		s.mu.Lock()
		ok := !s.done
		s.done = true
		s.mu.Unlock()
		return ok
	}
	d := ctx.Done()
	go func() {
		<-d
		if claim() {
			f()
		}
	}()
	return claim
}
