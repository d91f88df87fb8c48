package wasi_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/build"
	"github.com/agentrt/agentrt/jshost"
	"github.com/agentrt/agentrt/wasihost"
	"github.com/agentrt/agentrt/wire"
)

var ctx = context.Background()

// history returns n messages, user and assistant in turn, of 40 to 400
// bytes of ASCII text (a fixed sequence, the same in every run).
func history(n int) []core.SeedMessage {
	h := make([]core.SeedMessage, n)
	x := uint32(2463534242)
	for i := range h {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		role := core.RoleUser
		if i%2 == 1 {
			role = core.RoleAssistant
		}
		h[i] = core.SeedMessage{Role: role, Content: strings.Repeat("word ", 8+int(x%72)) + strconv.Itoa(i)}
	}
	return h
}

// contender runs turns on one host: seed runs a turn carrying history
// on the cold session id, warm one turn without history on id.
type contender struct {
	name string
	turn func(tb testing.TB, id, input string, h []core.SeedMessage) string
	drop func(id string)
	// settle collects garbage, so that the setup's garbage is not
	// collected during the timed runs.
	settle func()
	close  func()
}

// reads is the Go model of the host-model rows: it reads every message
// it is handed, as a model that sends them upstream does.
var reads = core.ModelFunc(func(_ core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	n := 0
	for i := range req.Messages {
		n += len(req.Messages[i].Content)
	}
	return &core.ModelReply{Content: "read " + strconv.Itoa(n)}, nil
})

func nativeContender(tb testing.TB, model core.Model) contender {
	rt, err := core.New(core.Config{Model: model})
	if err != nil {
		tb.Fatal(err)
	}
	return contender{
		name: "native core",
		turn: func(tb testing.TB, id, input string, h []core.SeedMessage) string {
			req := core.RunRequest{SessionID: id, Input: input, WithHistory: h != nil, History: h}
			res, err := rt.Execute(ctx, req)
			if err != nil {
				tb.Fatal(err)
			}
			return res.Reply.Content
		},
		drop:   func(id string) { rt.DeleteSession(id) },
		settle: runtime.GC,
		close:  rt.Close,
	}
}

func wasiContender(tb testing.TB, m *wasihost.Module, model core.Model) contender {
	in, err := m.Instantiate(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	rt, err := in.NewRuntime(wasihost.Config{Model: model})
	if err != nil {
		tb.Fatal(err)
	}
	return contender{
		name: "WASI module, wazero",
		turn: func(tb testing.TB, id, input string, h []core.SeedMessage) string {
			req := core.RunRequest{SessionID: id, Input: input, WithHistory: h != nil, History: h}
			res, err := rt.Run(ctx, req)
			if err != nil {
				tb.Fatal(err)
			}
			return res.Reply.Content
		},
		drop:   func(id string) { rt.DeleteSession(id) },
		settle: func() { rt.Stats(true); runtime.GC() },
		close:  func() { in.Close(ctx) },
	}
}

// jshostContender runs the GOOS=js module through its syscall/js API,
// the history packed (a Uint8Array). A host model reads every message of
// the JavaScript request it is handed.
func jshostContender(tb testing.TB, m *jshost.Module, hostModel bool) contender {
	in, err := jshost.NewInstance(ctx, m, jshost.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	config := map[string]any{}
	if hostModel {
		config["model"] = jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
			msgs := jshost.Get(args[0], "messages")
			n, _ := jshost.Get(msgs, "length").(float64)
			total := 0
			for i := 0; i < int(n); i++ {
				s, _ := jshost.Get(msgs, strconv.Itoa(i), "content").(string)
				total += len(s)
			}
			return map[string]any{"content": "read " + strconv.Itoa(total)}, nil
		})
	}
	rt, err := in.Call(ctx, in.Global("agentrt"), "createRuntime", config)
	if err != nil {
		tb.Fatal(err)
	}
	return contender{
		name: "GOOS=js module, jshost",
		turn: func(tb testing.TB, id, input string, h []core.SeedMessage) string {
			var v jshost.Value
			var err error
			if h != nil {
				v, err = in.CallAsync(ctx, rt, "startRunWithHistory", id, input, &jshost.Uint8Array{Bytes: wire.EncodeHistory(h)})
			} else {
				v, err = in.CallAsync(ctx, rt, "startRun", id, input)
			}
			if err != nil {
				tb.Fatal(err)
			}
			s, _ := jshost.Get(v, "reply", "content").(string)
			return s
		},
		drop:   func(id string) { in.Call(ctx, rt, "deleteSession", id) },
		settle: func() { in.Call(ctx, rt, "stats", map[string]any{"gc": true}); runtime.GC() },
		close:  func() { in.Close(ctx) },
	}
}

// jsFastContender runs the GOOS=js module through its fast path (the
// same wire exports as the WASI module) under jshost, as the glue does:
// the history packed in the begin frame, the model answered in Go from a
// mirror of each session.
func jsFastContender(tb testing.TB, m *jshost.Module, hostModel bool) contender {
	in, err := jshost.NewInstance(ctx, m, jshost.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	config := map[string]any{}
	if hostModel {
		// A JavaScript model makes the fast path hand model calls to the
		// host; it is never called.
		config["model"] = jshost.Func(func(jshost.Value, []jshost.Value) (any, error) { return nil, nil })
	}
	obj, err := in.Call(ctx, in.Global("agentrt"), "createRuntime", config)
	if err != nil {
		tb.Fatal(err)
	}
	num, _ := jshost.Get(obj, "fastPath").(float64)
	x := in.Exports()
	call := func(tb testing.TB, export string, frame []byte) []byte {
		res, err := x.Call(ctx, "agentrt_in", uint64(len(frame)))
		if err == nil {
			err = x.Write(ctx, uint32(res[0]), frame)
		}
		if err == nil {
			res, err = x.Call(ctx, export, uint64(num), uint64(len(frame)))
		}
		if err != nil {
			tb.Fatal(err)
		}
		n := uint32(res[0])
		at, err := x.Call(ctx, "agentrt_out")
		if err != nil {
			tb.Fatal(err)
		}
		out, err := x.Read(ctx, uint32(at[0]), n)
		if err != nil {
			tb.Fatal(err)
		}
		return out
	}
	type mirror struct {
		gen  uint64
		msgs []core.Message
	}
	mirrors := map[string]*mirror{}
	return contender{
		name: "GOOS=js module fast path, jshost",
		turn: func(tb testing.TB, id, input string, h []core.SeedMessage) string {
			b := wire.Begin{SessionID: id, Input: input, WithHistory: h != nil, History: h}
			var hist []core.Message
			if hostModel && h != nil {
				// The mirror built from the history, as the glue builds it.
				b.HistoryMirror = true
				hist = make([]core.Message, 0, len(h))
				for i := range h {
					if h[i].Role != core.RoleSystem {
						hist = append(hist, h[i].Message())
					}
				}
			}
			mr := mirrors[id]
			if mr != nil {
				b.MirrorGen, b.MirrorLen = mr.gen, len(mr.msgs)
			}
			out := call(tb, "agentrt_begin", wire.AppendBegin(nil, &b))
			for {
				a, err := wire.DecodeAction(out)
				if err != nil {
					tb.Fatalf("%v (%x)", err, out[:min(len(out), 64)])
				}
				switch a.Kind {
				case wire.ActDone:
					return a.Result.Reply.Content
				case wire.ActModel:
					if a.Adopt {
						mr = &mirror{gen: a.Generation, msgs: hist}
					}
					if mr == nil || mr.gen != a.Generation || len(mr.msgs) < a.From {
						mr = &mirror{}
					}
					// Cut to From and append in place, as the glue does
					// (length = from, then push): the model has returned, so
					// nothing holds the messages past From, and a turn costs
					// its tail, not a copy of the whole session.
					mr.gen, mr.msgs = a.Generation, append(mr.msgs[:a.From], a.Tail...)
					mirrors[id] = mr
					reply, _ := reads.Complete(core.Background(), &core.ModelRequest{Messages: mr.msgs[a.Start:a.End]})
					out = call(tb, "agentrt_feed", wire.AppendModelReply(nil, &wire.ModelReply{Handle: a.Handle, Reply: *reply}))
				default:
					tb.Fatalf("unexpected action %d: %+v", a.Kind, a.Err)
				}
			}
		},
		drop: func(id string) {
			delete(mirrors, id)
			in.Call(ctx, obj, "deleteSession", id)
		},
		settle: func() { in.Call(ctx, obj, "stats", map[string]any{"gc": true}); runtime.GC() },
		close:  func() { in.Close(ctx) },
	}
}

// modules builds and compiles both modules once.
type modules struct {
	wasi, js         string
	wasiMod          *wasihost.Module
	jsMod            *jshost.Module
	wasiSize, jsSize build.Size
}

func mustModules(tb testing.TB) *modules {
	tb.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatal("go toolchain not found")
		}
		tb.Skip("go toolchain not found: cannot build the modules")
	}
	root, err := build.Root()
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	m := &modules{}
	// The WASI module as agentrt build ships it: pre-initialized. Both
	// are dist/'s when $AGENTRT_DIST is set (make test).
	wasi, err := build.TestWasiModules(ctx, root, dir, os.Stderr)
	if err != nil {
		tb.Fatal(err)
	}
	m.wasi = wasi.Module
	if m.js, err = build.TestModule(ctx, root, dir); err != nil {
		tb.Fatal(err)
	}
	if m.wasiSize, err = build.SizeOf(m.wasi); err != nil {
		tb.Fatal(err)
	}
	if m.jsSize, err = build.SizeOf(m.js); err != nil {
		tb.Fatal(err)
	}
	if m.wasiMod, err = wasihost.CompileFile(ctx, m.wasi, nil); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.wasiMod.Close(ctx) })
	if m.jsMod, err = jshost.CompileFile(ctx, m.js, nil); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.jsMod.Close(ctx) })
	return m
}

// work is one measured row: what each iteration does on a contender.
type work struct {
	name string
	// setup prepares c (warm sessions) before timing.
	setup func(tb testing.TB, c contender)
	op    func(tb testing.TB, c contender, i int)
	// maxRuns bounds the timed runs (0: none), so that warm sessions stay
	// near their size.
	maxRuns int
}

const seedN = 10000

var seedHistory = history(seedN)

// warm is a row of warm turns on sessions of n messages: k sessions are
// seeded first and turns go round them, at most 10 per session.
func warm(name string, n, k int) work {
	id := func(i int) string { return "warm" + strconv.Itoa(n) + "-" + strconv.Itoa(i%k) }
	return work{
		name: name,
		setup: func(tb testing.TB, c contender) {
			for i := 0; i < k; i++ {
				c.turn(tb, id(i), "start", seedHistory[:n])
			}
		},
		op:      func(tb testing.TB, c contender, i int) { c.turn(tb, id(i), "more "+strconv.Itoa(i), nil) },
		maxRuns: 10 * k,
	}
}

var works = []work{
	{
		name: "cold seed, 10,000 messages",
		op: func(tb testing.TB, c contender, i int) {
			id := "cold-" + strconv.Itoa(i)
			c.turn(tb, id, "next", seedHistory)
			c.drop(id)
		},
	},
	warm("warm turn, 100-message session", 100, 50),
	warm("warm turn, 10,000-message session", seedN, 5),
}

// BenchmarkWASI measures each row on the three hosts, with the model in
// the module (echo) and in the host (a Go model, or a JavaScript model
// under jshost, that reads every message), interleaving the contenders
// over rounds; it prints the median time per operation and its ratio to
// native core, and the modules' gzip sizes.
func BenchmarkWASI(b *testing.B) {
	m := mustModules(b)
	rounds := 3
	if s := os.Getenv("AGENTRT_BENCH_ROUNDS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			rounds = n
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\nWASI module against native core and the GOOS=js module (median of %d interleaved rounds)\n\n", rounds)
	fmt.Fprintf(&out, "| work | model | native core | WASI, wazero | GOOS=js fast path, jshost | GOOS=js syscall/js, jshost | WASI / native | WASI / fast path | WASI / syscall/js |\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, hostModel := range []bool{false, true} {
		model, label := core.Model(nil), "echo in the module"
		if hostModel {
			model, label = reads, "host model reads messages"
		}
		makers := []func() contender{
			func() contender { return nativeContender(b, model) },
			func() contender { return wasiContender(b, m.wasiMod, model) },
			func() contender { return jsFastContender(b, m.jsMod, hostModel) },
			func() contender { return jshostContender(b, m.jsMod, hostModel) },
		}
		for _, w := range works {
			times := make([][]time.Duration, len(makers))
			for r := 0; r < rounds; r++ {
				for k, mk := range makers {
					c := mk()
					if w.setup != nil {
						w.setup(b, c)
					}
					c.settle()
					d := measure(w.maxRuns, func(i int) { w.op(b, c, i) })
					c.close()
					times[k] = append(times[k], d)
				}
			}
			med := make([]time.Duration, len(times))
			for k, ts := range times {
				sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
				med[k] = ts[len(ts)/2]
			}
			fmt.Fprintf(&out, "| %s | %s | %s | %s | %s | %s | %.2fx | %.2fx | %.2fx |\n", w.name, label,
				show(med[0]), show(med[1]), show(med[2]), show(med[3]),
				float64(med[1])/float64(med[0]), float64(med[1])/float64(med[2]), float64(med[1])/float64(med[3]))
		}
	}
	fmt.Fprintf(&out, "\n| module | raw | gzip | gzip / GOOS=js |\n|---|--:|--:|--:|\n")
	fmt.Fprintf(&out, "| agentrt.wasm (GOOS=js) | %d | %d | 1.00x |\n", m.jsSize.Raw, m.jsSize.Gzip)
	fmt.Fprintf(&out, "| agentrt-wasi.wasm (GOOS=wasip1) | %d | %d | %.2fx |\n", m.wasiSize.Raw, m.wasiSize.Gzip, float64(m.wasiSize.Gzip)/float64(m.jsSize.Gzip))
	fmt.Print(out.String())
	b.ReportMetric(0, "ns/op")
}

// measure runs op (with its iteration number) for at least minTime and
// minRuns runs, and at most maxRuns (0: no bound), after one warm-up
// run, and returns the time per run. It is not testing.Benchmark, which
// cannot run inside a benchmark.
func measure(maxRuns int, op func(i int)) time.Duration {
	const minTime, minRuns = 500 * time.Millisecond, 3
	op(0)
	start := time.Now()
	n := 0
	for n < minRuns || (time.Since(start) < minTime && (maxRuns == 0 || n < maxRuns-1)) {
		n++
		op(n)
	}
	return time.Since(start) / time.Duration(n)
}

func show(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.1f µs", float64(d)/1e3)
	}
}

// Ensure every contender gives the same replies to the same turns, so
// the benchmark compares the same work.
func TestContenders_SameReplies(t *testing.T) {
	m := mustModules(t)
	for _, hostModel := range []bool{false, true} {
		model := core.Model(nil)
		if hostModel {
			model = reads
		}
		var replies [][]string
		for _, c := range []contender{nativeContender(t, model), wasiContender(t, m.wasiMod, model),
			jsFastContender(t, m.jsMod, hostModel), jshostContender(t, m.jsMod, hostModel)} {
			replies = append(replies, []string{c.turn(t, "s", "hello", seedHistory[:50]), c.turn(t, "s", "again", nil)})
			c.close()
		}
		for k := 1; k < len(replies); k++ {
			if fmt.Sprint(replies[k]) != fmt.Sprint(replies[0]) || replies[0][1] == "" {
				t.Fatalf("host model %v: replies %q, want all equal", hostModel, replies)
			}
		}
	}
}
