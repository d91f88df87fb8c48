package wasihost

import (
	"context"
	"errors"
	"strconv"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// count answers a count action with Config.CountTokens: the count of
// each message, in order, or the counter's failure (its error, a panic,
// a count out of 0..core.MaxTokenCount), which fails the run typed as
// core fails it in process. The counter runs as a model call does,
// bounded by the run's context and timeout.
func (t *turn) count(a *wire.Action) (*wire.Action, error) {
	v, err := t.call(func(context.Context) (any, error) { return countAll(t.rt.cfg.CountTokens, a.Count), nil })
	if err == errStopped {
		return t.stop()
	}
	c, _ := v.(*wire.Counts)
	if err != nil || c == nil {
		c = &wire.Counts{Err: countError(err)}
	}
	c.Handle = t.handle
	return t.rt.feed(t, wire.AppendCounts(nil, c))
}

// countAll counts msgs with count, stopping at the first failure.
func countAll(count core.TokenCounter, msgs []core.Message) *wire.Counts {
	c := &wire.Counts{Counts: make([]int, len(msgs))}
	for i := range msgs {
		n, err := countOne(count, msgs[i])
		if err != nil {
			return &wire.Counts{Err: countError(err)}
		}
		if n < 0 || n > core.MaxTokenCount {
			return &wire.Counts{Err: core.NewError(core.CodeInvalidArgument, "countTokens returned "+strconv.Itoa(n)+
				"; a count must be from 0 to "+strconv.Itoa(core.MaxTokenCount))}
		}
		c.Counts[i] = n
	}
	return c
}

// countOne calls count, turning a panic into an error.
func countOne(count core.TokenCounter, m core.Message) (n int, err error) {
	defer func() {
		if recover() != nil {
			n, err = 0, core.NewError(core.CodeInvalidArgument, "countTokens panicked")
		}
	}()
	return count(m)
}

// countError is the failure a counter's error reaches the module as: a
// *core.Error keeps its code, any other error (a typed nil *core.Error,
// one without a code) is invalid_argument.
func countError(err error) *core.Error {
	if err == nil {
		return core.NewError(core.CodeInvalidArgument, "countTokens returned no counts")
	}
	var e *core.Error
	if errors.As(err, &e) && e != nil && e.Code != "" {
		return e
	}
	return core.NewError(core.CodeInvalidArgument, "countTokens failed: "+err.Error())
}
