package wasihost

import (
	"context"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// FuzzExports sends arbitrary bytes to the module's frame exports: every
// call must answer a frame the host can read (an action or a refusal),
// and the instance must keep serving.
func FuzzExports(f *testing.F) {
	f.Add(byte(0), wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "hi", WithHistory: true,
		History: []core.SeedMessage{{Role: core.RoleUser, Content: "a"}}}))
	f.Add(byte(1), wire.AppendModelReply(nil, &wire.ModelReply{Handle: 1, Reply: core.ModelReply{Content: "x"}}))
	f.Add(byte(1), wire.AppendToolResult(nil, &wire.ToolResult{Handle: 1, Text: "t"}))
	f.Add(byte(2), configFrame())
	in := mustInstance(f)
	rt := mustRuntime(f, in, Config{Model: &recorder{}, Tools: []core.Tool{clock}})
	f.Fuzz(func(t *testing.T, which byte, frame []byte) {
		in.mu.Lock()
		var out []byte
		var err error
		switch which % 3 {
		case 0:
			out, _, err = in.exchange(expBegin, rt.num, frame)
		case 1:
			out, _, err = in.exchange(expFeed, rt.num, frame)
		default:
			if err = in.write(frame); err == nil {
				var n int32
				if n, err = in.call(expCreate, uint64(len(frame))); err == nil && n < 0 {
					out, err = in.output(-n)
				}
			}
		}
		in.mu.Unlock()
		if err != nil {
			t.Fatalf("the instance failed: %v", err)
		}
		if out != nil {
			k, kerr := wire.FrameKind(out)
			switch {
			case kerr != nil:
				t.Fatalf("unreadable answer: %v", kerr)
			case k == wire.KindRefused:
				if _, derr := wire.DecodeRefused(out); derr != nil {
					t.Fatal(derr)
				}
			default:
				a, derr := wire.DecodeAction(out)
				if derr != nil {
					t.Fatal(derr)
				}
				// Finish the turn the fuzzer began, so sessions stay free.
				for i := 0; a.Kind != wire.ActDone && a.Kind != wire.ActFailed; i++ {
					if i == 100 {
						t.Fatalf("the turn does not end: action %d", a.Kind)
					}
					var answer []byte
					switch a.Kind {
					case wire.ActModel:
						answer = wire.AppendModelReply(nil, &wire.ModelReply{Handle: a.Handle, Failed: true, Error: "stop"})
					case wire.ActTool:
						answer = wire.AppendToolResult(nil, &wire.ToolResult{Handle: a.Handle, Failed: true, Text: "stop"})
					}
					in.mu.Lock()
					if answer != nil {
						out, _, err = in.exchange(expFeed, rt.num, answer)
					} else {
						var n int32
						if n, err = in.call(expNext, uint64(uint32(rt.num)), a.Handle, 0); err == nil {
							out, err = in.output(n)
						}
					}
					in.mu.Unlock()
					if err != nil {
						t.Fatal(err)
					}
					if a, derr = wire.DecodeAction(out); derr != nil {
						t.Fatal(derr)
					}
				}
			}
		}
		if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "probe", Input: "hi"}); err != nil {
			t.Fatalf("the instance stopped serving: %v", err)
		}
	})
}

func configFrame() []byte { return wire.AppendConfig(nil, &wire.Config{SystemPrompt: "s"}) }
