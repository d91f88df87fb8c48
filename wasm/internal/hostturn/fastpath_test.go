package hostturn_test

import (
	"testing"

	"github.com/agentrt/agentrt/bench/gocore"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/hostturn"
	"github.com/agentrt/agentrt/wire"
)

// hostMirror is what the glue keeps of one session: its generation and
// length (the messages themselves do not matter to the module).
type hostMirror struct {
	gen uint64
	n   int
}

// fastTurn runs one turn over wire frames as the glue does (begin, then
// the model's reply), keeping the mirror in step, and fails on anything
// but a completed run.
func fastTurn(b *testing.B, x *hostturn.Driver, m *hostMirror, buf []byte, input string, history []byte) []byte {
	bg := wire.Begin{SessionID: "s", Input: input, MirrorGen: m.gen, MirrorLen: m.n}
	if history != nil {
		bg.WithHistory, bg.HistoryMirror, bg.Packed = true, m.gen == 0, history
	}
	buf = wire.AppendBegin(buf[:0], &bg)
	out := x.Begin(buf)
	a, err := wire.DecodeAction(out)
	if err != nil || a.Kind != wire.ActModel {
		b.Fatalf("begin: %v %+v", err, a)
	}
	if a.Adopt {
		m.gen, m.n = a.Generation, a.From
	}
	m.gen, m.n = a.Generation, a.End
	buf = wire.AppendModelReply(buf[:0], &wire.ModelReply{Handle: a.Handle, Reply: core.ModelReply{Content: "ok"}})
	a, err = wire.DecodeAction(x.Feed(buf))
	if err != nil || a.Kind != wire.ActDone {
		b.Fatalf("feed: %v %+v", err, a)
	}
	return buf
}

// fastWarmTurn is warmTurn over wire frames: what the module's exports
// do for the glue, natively.
func fastWarmTurn(b *testing.B, withHistory bool) {
	history := wire.AppendHistory(nil, gocore.History(100)[:98])
	rt := benchRuntime(b)
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	var m hostMirror
	var buf []byte
	var h []byte
	if withHistory {
		h = history
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%10 == 0 {
			buf = reseed(b, rt, x, &m, buf, history)
		}
		buf = fastTurn(b, x, &m, buf, "next", h)
	}
}

// reseed drops the session and seeds it again with history, untimed, so
// that the turns measured run on a session of about the same size. m is
// the mirror after the seed's turn: its input, not its reply.
func reseed(b *testing.B, rt *core.Runtime, x *hostturn.Driver, m *hostMirror, buf, history []byte) []byte {
	b.StopTimer()
	rt.DeleteSession("s")
	*m = hostMirror{}
	buf = fastTurn(b, x, m, buf, "warm up", history)
	b.StartTimer()
	return buf
}

// BenchmarkFastWarmTurn100 is BenchmarkWarmTurn100 over wire frames.
func BenchmarkFastWarmTurn100(b *testing.B) { fastWarmTurn(b, false) }

// BenchmarkFastWarmTurn100History is BenchmarkWarmTurn100History over
// wire frames.
func BenchmarkFastWarmTurn100History(b *testing.B) { fastWarmTurn(b, true) }

// BenchmarkFastSeed1000 seeds 1,000 messages into a cold session over
// wire frames, the session dropped after each.
func BenchmarkFastSeed1000(b *testing.B) {
	history := wire.AppendHistory(nil, gocore.History(1000))
	rt := benchRuntime(b)
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	var buf []byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := hostMirror{}
		buf = fastTurn(b, x, &m, buf, "next question", history)
		rt.DeleteSession("s")
	}
}

// benchRuntime returns a runtime of the default config, closed when b
// ends.
func benchRuntime(b *testing.B) *core.Runtime {
	rt, err := core.New(core.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rt.Close)
	return rt
}

// BenchmarkFastWarmTurn100Quick is the module's part of the glue's warm
// turn of a quick turn (docs/adr/0012-quick-turn.md): one commit frame
// of the input and the reply on a session of about 100 messages, and its
// committed frame read back.
func BenchmarkFastWarmTurn100Quick(b *testing.B) {
	history := wire.AppendHistory(nil, gocore.History(100)[:98])
	rt := benchRuntime(b)
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	var m hostMirror
	var buf []byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%10 == 0 {
			buf = reseed(b, rt, x, &m, buf, history)
			m.n++ // the reply: a commit names the whole session
		}
		buf = wire.AppendCommit(buf[:0], &core.Commit{SessionID: "s", RunID: "r", Input: "next", MirrorGen: m.gen, MirrorLen: m.n, Reply: "ok"})
		out := x.Commit(buf)
		c, err := wire.DecodeCommitted(out)
		if err != nil || c.Stale {
			b.Fatalf("commit: %v %+v", err, c)
		}
		m.n += 2
	}
}
