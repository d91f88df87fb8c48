package core

import "testing"

func TestGeneratedRunID(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		want string
	}{{1, "agentrt:run-1"}, {9, "agentrt:run-9"}, {10, "agentrt:run-10"}, {1<<64 - 1, "agentrt:run-18446744073709551615"}} {
		if got := generatedRunID(c.n); got != c.want {
			t.Errorf("generatedRunID(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
