package core_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// benchHistory returns n messages of about 250 bytes each, every tenth
// turn a tool call with its result.
func benchHistory(n int) []core.SeedMessage {
	text := strings.Repeat("lorem ipsum dolor sit amet ", 9)[:240]
	h := make([]core.SeedMessage, 0, n)
	for i := 0; len(h) < n; i++ {
		switch {
		case i%10 == 9 && len(h)+3 <= n:
			id := "call_" + strconv.Itoa(i)
			h = append(h,
				core.SeedMessage{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: id, Name: "lookup", Arguments: `{"query":"` + text[:200] + `"}`}}},
				core.SeedMessage{Role: core.RoleTool, ToolCallID: id, Content: text},
				core.SeedMessage{Role: core.RoleAssistant, Content: text})
		case i%2 == 0:
			h = append(h, core.SeedMessage{Role: core.RoleUser, Content: text})
		default:
			h = append(h, core.SeedMessage{Role: core.RoleAssistant, Content: text})
		}
	}
	return h
}

// instant answers at once, so a turn measures the runtime alone.
var instant = core.ModelFunc(func(core.Context, *core.ModelRequest) (*core.ModelReply, error) {
	return &core.ModelReply{Content: "ok"}, nil
})

// BenchmarkSeed10000 seeds 10,000 messages into a cold session: one run
// with history on a new session id each iteration.
func BenchmarkSeed10000(b *testing.B) {
	history := benchHistory(10000)
	rt := mustRuntime(b, core.Config{Model: instant, Limits: core.Limits{MaxSessions: 4}})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run, err := rt.StartRunWithHistory(bg, "s"+strconv.Itoa(i), "next", history)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := run.Wait(bg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWarmTurn100 runs one turn on a warm 100-message session whose
// model answers at once, passing the history as hosts do (a noop seed).
func BenchmarkWarmTurn100(b *testing.B) {
	history := benchHistory(100)
	rt := mustRuntime(b, core.Config{Model: instant})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%10 == 0 {
			// Keep the session at 100 to 120 messages.
			b.StopTimer()
			rt.DeleteSession("s")
			run, _ := rt.StartRunWithHistory(bg, "s", "warm up", history[:98])
			run.Wait(bg)
			b.StartTimer()
		}
		run, err := rt.StartRunWithHistory(bg, "s", "next", history[:98])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := run.Wait(bg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate10000 validates 10,000 messages without seeding.
func BenchmarkValidate10000(b *testing.B) {
	history := benchHistory(10000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := core.ValidateHistory(history, core.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
