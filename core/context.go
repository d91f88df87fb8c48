//go:build !agentrt_nocontext

package core

import (
	"context"
	"time"
)

// Context is the context a run hands its model and tools: a
// context.Context, so a Go model passes it as it is to
// http.NewRequestWithContext and other standard clients. It is done when
// the run is cancelled, times out, the context the run was started with
// is done, or the run ends; StopCause says which. Its values are those of
// the context the run was started with.
//
// # Notes
//
//   - The module agentrt ships (built with the tag agentrt_nocontext)
//     compiles Context as a smaller interface of Done and Err alone,
//     because package context costs it about 60 KB gzip of download and
//     it runs no Go models of its hosts'. See docs/adr/0002.
type Context = context.Context

// Background returns context.Background(): a Context that is never done.
func Background() Context { return context.Background() }

// Deadline implements context.Context: that of the context the run was
// started with. The run's own timeout is not reported here; the context
// is done when it fires.
func (c *runContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }

func parentValue(parent Context, key any) any { return parent.Value(key) }

// afterDone is AfterStop for a ctx that is not a run's.
func afterDone(ctx Context, f func()) func() bool { return context.AfterFunc(ctx, f) }

func valueOf(ctx Context, key any) any { return ctx.Value(key) }
