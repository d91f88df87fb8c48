package openai

import (
	"context"
	"time"

	"github.com/agentrt/agentrt/core"
)

// stdContext returns ctx as a context.Context for net/http: ctx itself
// when it is one, else a view with no deadline that passes on the values
// ctx carries (a run's context carries those of the context the host
// started the run with).
func stdContext(ctx core.Context) context.Context {
	if c, ok := ctx.(context.Context); ok {
		return c
	}
	return coreContext{ctx}
}

type coreContext struct{ core.Context }

func (coreContext) Deadline() (time.Time, bool) { return time.Time{}, false }

func (c coreContext) Value(key any) any {
	if v, ok := c.Context.(interface{ Value(any) any }); ok {
		return v.Value(key)
	}
	return nil
}
