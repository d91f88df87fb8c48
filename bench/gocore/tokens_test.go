package gocore_test

import (
	"testing"
	"time"

	"github.com/agentrt/agentrt/bench/gocore"
	"github.com/agentrt/agentrt/core"
)

// tokensBar is the bar of BenchmarkWarmTurn5000Tokens: a warm turn under
// policy.maxContextTokens may cost at most this times the same turn
// without a budget (docs/adr/0018-context-window-by-tokens.md: a warm
// turn counts its input and the previous reply only, and the window is
// found on the cached running sums).
const tokensBar = 1.5

// tokensBudget is the budget of the benchmark: a 32k-token model's,
// about a tenth of the 5,000-message session by the estimate.
const tokensBudget = 32000

// BenchmarkWarmTurn5000Tokens is one warm turn on a 5,000-message session
// under policy.maxContextTokens, measured turn by turn against its
// baseline, the same turn on another session of the same messages
// without a budget, the two alternating. It reports the ratio as
// x-baseline and fails over tokensBar. Both sessions are seeded again,
// untimed, every 100 turns, and each is given an untimed turn after its
// seeding, so that the timed turns are warm (the counts cached).
func BenchmarkWarmTurn5000Tokens(b *testing.B) {
	history := gocore.History(5000)
	rt := mustRuntime(b, core.Config{Model: instant})
	budget := core.Policy{MaxContextTokens: tokensBudget}
	turn := func(id string, p core.Policy) *core.Result {
		return must{b}.wait(rt.Start(bg, core.RunRequest{SessionID: id, Input: "next", Policy: p}))
	}
	var withBudget, without time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%100 == 0 {
			b.StopTimer()
			for _, id := range []string{"t", "p"} {
				rt.DeleteSession(id)
				must{b}.wait(rt.StartRunWithHistory(bg, id, "warm up", history[:4998]))
			}
			if res := turn("t", budget); res.Context == nil || res.Context.Dropped == 0 || res.Context.Tokens > tokensBudget {
				b.Fatalf("the budget did not window the session: %+v", res.Context)
			}
			turn("p", core.Policy{})
			b.StartTimer()
		}
		start := time.Now()
		turn("t", budget)
		mid := time.Now()
		turn("p", core.Policy{})
		withBudget += mid.Sub(start)
		without += time.Since(mid)
	}
	ratio := float64(withBudget) / float64(without)
	b.ReportMetric(float64(withBudget.Nanoseconds())/float64(b.N), "ns/budget-turn")
	b.ReportMetric(float64(without.Nanoseconds())/float64(b.N), "ns/baseline-turn")
	b.ReportMetric(ratio, "x-baseline")
	if b.N >= 100 && ratio > tokensBar {
		b.Errorf("a warm turn under maxContextTokens costs %.2fx the same turn without a budget, over the bar %.1fx", ratio, tokensBar)
	}
}
