package core_test

import (
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// The bounds of a policy are core's, for every edge: Validate refuses a
// negative field and one over its bound with invalid_argument naming it,
// and accepts each bound itself.
func TestPolicyValidateBounds(t *testing.T) {
	cases := []struct {
		name   string
		p      core.Policy
		reason string // "" when valid
	}{
		{"zero", core.Policy{}, ""},
		{"timeout at the bound", core.Policy{TimeoutMs: core.MaxTimeoutMs}, ""},
		{"timeout a millisecond over", core.Policy{TimeoutMs: core.MaxTimeoutMs + 1}, "policy.timeoutMs is too large"},
		{"timeout of a year", core.Policy{TimeoutMs: 365 * 24 * 3600 * 1000}, "policy.timeoutMs is too large"},
		{"timeout that overflows a Duration", core.Policy{TimeoutMs: 1 << 53}, "policy.timeoutMs is too large"},
		{"negative timeout", core.Policy{TimeoutMs: -1}, "policy.timeoutMs must not be negative"},
		{"maxSteps at the bound", core.Policy{MaxSteps: core.MaxCount}, ""},
		{"maxSteps over", core.Policy{MaxSteps: core.MaxCount + 1}, "policy.maxSteps is too large"},
		{"maxContextMessages over", core.Policy{MaxContextMessages: core.MaxCount + 1}, "policy.maxContextMessages is too large"},
		{"maxContextBytes at the bound", core.Policy{MaxContextBytes: core.MaxBytes}, ""},
		{"maxContextBytes over", core.Policy{MaxContextBytes: core.MaxBytes + 1}, "policy.maxContextBytes is too large"},
		{"negative maxSteps", core.Policy{MaxSteps: -1}, "policy.maxSteps must not be negative"},
		{"unknown seedMode", core.Policy{SeedMode: "always"}, "policy.seedMode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.p.Validate()
			if c.reason == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			e := core.AsError(err)
			if e == nil || e.Code != core.CodeInvalidArgument || !strings.Contains(e.Message, c.reason) {
				t.Fatalf("Validate() = %v, want invalid_argument %q", err, c.reason)
			}
		})
	}
}

// Limits are bounded as policies are: a count over MaxCount or bytes over
// MaxBytes are refused by New before a runtime exists.
func TestLimitsValidateBounds(t *testing.T) {
	for _, l := range []core.Limits{
		{MaxSessions: core.MaxCount + 1},
		{MaxSeedMessages: core.MaxCount + 1},
		{MaxTotalBytes: core.MaxBytes + 1},
		{MaxMessageBytes: -1},
	} {
		if _, err := core.New(core.Config{Limits: l}); core.AsError(err) == nil || core.AsError(err).Code != core.CodeInvalidArgument {
			t.Errorf("New(%+v) = %v, want invalid_argument", l, err)
		}
	}
	ok := core.Limits{MaxSessions: core.MaxCount, MaxTotalBytes: core.MaxBytes}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v, want nil", ok, err)
	}
}
