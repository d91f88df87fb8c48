//go:build js && agentrt_nocontext

package core

// The GOOS=js module has no token window yet (see tokens_window.go):
// a policy with a token budget is refused, never run without it.

// errNoTokenWindow refuses a token budget in the GOOS=js module.
var errNoTokenWindow = NewError(CodeInvalidArgument, "policy.maxContextTokens is not supported by this module yet")

// checkInputTokens refuses a token budget, before seeding.
func (t *turn) checkInputTokens() *Error {
	if t.run.req.Policy.MaxContextTokens != 0 {
		return errNoTokenWindow
	}
	return nil
}

// contextWindow returns the messages the model call due is sent: the
// newest that fit the policy's MaxContextMessages and MaxContextBytes.
func (t *turn) contextWindow(all []Message, _ uint64) ([]Message, *Error) {
	p := &t.run.req.Policy
	if p.MaxContextTokens != 0 {
		return nil, errNoTokenWindow
	}
	return window(all, p.MaxContextMessages, p.MaxContextBytes), nil
}
