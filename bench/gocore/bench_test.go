package gocore_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/bench/gocore"
	"github.com/agentrt/agentrt/core"
)

var bg = context.Background()

// jsHistoryBytes is historyBytes(makeHistory(10000)) in bench/history.mjs.
const jsHistoryBytes = 2369950

// Ensure the Go generator produces the JavaScript history, so that the
// native figures measure the same work.
func TestMakeHistory_MatchesJS(t *testing.T) {
	h := gocore.History(10000)
	if got := textBytes(h); got != jsHistoryBytes {
		t.Fatalf("text bytes of 10,000 messages: got %d, want %d (bench/history.mjs)", got, jsHistoryBytes)
	}
	if err := core.ValidateHistory(h, core.Limits{}); err != nil {
		t.Fatalf("generated history is invalid: %v", err)
	}
	if got, want := h[2].Content, "turns über garden tool "; !strings.HasPrefix(got, want) {
		t.Fatalf("message 2 is %q, want it to start with %q", got, want)
	}
}

func mustRuntime(tb testing.TB, cfg core.Config) *core.Runtime {
	tb.Helper()
	rt, err := core.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(rt.Close)
	return rt
}

// must fails the test or benchmark at once on an error.
type must struct{ testing.TB }

// wait waits for a started run and returns its result.
func (m must) wait(run *core.Run, err error) *core.Result {
	m.Helper()
	if err != nil {
		m.Fatal(err)
	}
	res, err := run.Wait(bg)
	if err != nil {
		m.Fatal(err)
	}
	return res
}

// instant answers at once, so a turn measures the runtime alone.
var instant = core.ModelFunc(func(core.Context, *core.ModelRequest) (*core.ModelReply, error) {
	return &core.ModelReply{Content: "ok"}, nil
})

// BenchmarkSeed10000 seeds the benchmark history into a cold session with
// the built-in echo model: one run on a new session id per iteration.
func BenchmarkSeed10000(b *testing.B) {
	history := gocore.History(10000)
	rt := mustRuntime(b, core.Config{Limits: core.Limits{MaxSessions: 2}})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := must{b}.wait(rt.StartRunWithHistory(bg, "s"+strconv.Itoa(i), "next question", history))
		if res.Seed.Seeded != 10000 {
			b.Fatalf("seeded %d", res.Seed.Seeded)
		}
	}
}

// warmTurn runs turns on a session kept between 100 and 120 messages,
// with or without passing the session's history again (a noop seed).
func warmTurn(b *testing.B, withHistory bool) {
	history := gocore.History(100)
	rt := mustRuntime(b, core.Config{Model: instant})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%10 == 0 {
			b.StopTimer()
			rt.DeleteSession("s")
			must{b}.wait(rt.StartRunWithHistory(bg, "s", "warm up", history[:98]))
			b.StartTimer()
		}
		if withHistory {
			must{b}.wait(rt.StartRunWithHistory(bg, "s", "next", history[:98]))
		} else {
			must{b}.wait(rt.StartRun(bg, "s", "next"))
		}
	}
}

// BenchmarkWarmTurn100 is one turn on a warm 100-message session.
func BenchmarkWarmTurn100(b *testing.B) { warmTurn(b, false) }

// BenchmarkWarmTurn100History is the same turn with the host passing its
// 98 prior turns again, as hosts do (a noop seed).
func BenchmarkWarmTurn100History(b *testing.B) { warmTurn(b, true) }

// BenchmarkHeapPerMessage reports the Go heap a session holds per stored
// message after seeding 100,000 messages (the history itself dropped),
// next to the text bytes per message the runtime counts. The timing of
// this benchmark means nothing.
func BenchmarkHeapPerMessage(b *testing.B) {
	const n = 100000
	var perMsg, textPerMsg float64
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rt := mustRuntime(b, core.Config{Limits: core.Limits{MaxMessagesPerSession: 2 * n, MaxSeedMessages: n,
			MaxSeedBytes: 1 << 30, MaxSessionBytes: 1 << 30, MaxTotalBytes: 1 << 31}})
		history := gocore.History(n)
		text := textBytes(history)
		must{b}.wait(rt.StartRunWithHistory(bg, "s", "next question", history))
		history = nil
		runtime.GC()
		runtime.ReadMemStats(&after)
		if s := rt.Stats(); s.Messages != n+2 {
			b.Fatalf("session holds %d messages, want %d", s.Messages, n+2)
		}
		runtime.KeepAlive(rt)
		perMsg = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
		textPerMsg = float64(text) / n
		rt.Close()
	}
	b.ReportMetric(perMsg, "heapB/msg")
	b.ReportMetric(textPerMsg, "textB/msg")
}

// textBytes is the byte count the runtime charges for history.
func textBytes(h []core.SeedMessage) int64 {
	var n int64
	for i := range h {
		m := h[i].Message()
		n += m.Size()
	}
	return n
}
