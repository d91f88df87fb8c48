package wire_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

var update = flag.Bool("update", false, "rewrite testdata/golden")

// goldenFrames are frames both implementations must write and read
// byte for byte: js/test/wire.test.mjs reads the same files.
func goldenFrames() map[string][]byte {
	acts := sampleActions()
	return map[string][]byte{
		"begin.bin": wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "héllo", RunID: "r", WithHistory: true, Events: true, HistoryMirror: true,
			Policy:    core.Policy{SeedMode: core.SeedReconcile, MaxSteps: 3, TimeoutMs: -1, AllowedTools: []string{"t"}},
			MirrorGen: 2, MirrorLen: 300,
			History: []core.SeedMessage{{Role: core.RoleUser, Content: "q", ID: "1"}, {Role: core.RoleAssistant, ContentMissing: true, ToolCalls: []core.ToolCall{{ID: "c", Name: "n", Arguments: "{}"}}}}}),
		"model-reply.bin":   wire.AppendModelReply(nil, &wire.ModelReply{Handle: 200, Reply: core.ModelReply{Content: "ok", ToolCalls: []core.ToolCall{{ID: "c", Name: "n", Arguments: "{\"a\":1}"}}}}),
		"model-failed.bin":  wire.AppendModelReply(nil, &wire.ModelReply{Handle: 1, Failed: true, Error: "boom"}),
		"tool-result.bin":   wire.AppendToolResult(nil, &wire.ToolResult{Handle: 3, Text: "42"}),
		"delta.bin":         wire.AppendDelta(nil, &wire.Delta{Handle: 3, Text: "δ"}),
		"action-model.bin":  wire.AppendAction(nil, &acts[1]),
		"action-tool.bin":   wire.AppendAction(nil, &acts[2]),
		"action-done.bin":   wire.AppendAction(nil, &acts[3]),
		"action-failed.bin": wire.AppendAction(nil, &acts[4]),
		"action-failed-kept.bin": wire.AppendAction(nil, &wire.Action{Handle: 5, Kind: wire.ActFailed, Err: &core.Error{
			Code: core.CodeModelError, Message: "down", Index: core.NoIndex,
			Appended: []core.Message{{Role: core.RoleTool, Content: "paid", ToolCallID: "c1"}}}}),
		"session.bin":        wire.AppendSession(nil, 4, sampleResult().Appended, "h1-g5foW_vpddqFPIhHk0erIg"),
		"stats.bin":          wire.AppendStats(nil, &wire.Stats{Stats: core.Stats{Sessions: 1, Messages: 2, Bytes: 300, ActiveRuns: 4, BudgetUsed: 500, BudgetBytes: 1 << 20}, HeapAlloc: 1 << 33}),
		"sessions.bin":       wire.AppendSessions(nil, []string{"a", "b"}),
		"commit.bin":         wire.AppendCommit(nil, &core.Commit{SessionID: "s", RunID: "glue:7", Input: "héllo", MirrorGen: 3, MirrorLen: 200, Reply: "ok"}),
		"committed.bin":      wire.AppendCommitted(nil, committed()),
		"stale.bin":          wire.AppendCommitted(nil, &wire.Committed{Stale: true, DroppedAll: true}),
		"limits.bin":         wire.AppendLimits(nil, &core.Limits{MaxSessions: 3, MaxMessagesPerSession: 100000, MaxSessionBytes: 1 << 30, MaxSeedMessages: 5, MaxSeedBytes: 300, MaxMessageBytes: 1 << 20, MaxTotalBytes: 1 << 24}),
		"limits-query.bin":   wire.AppendLimitsQuery(nil),
		"begin-tokens.bin":   wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "x", Policy: core.Policy{MaxContextTokens: 8000, ContextChunkTokens: 1000}}),
		"action-context.bin": wire.AppendAction(nil, &acts[6]),
		"config.bin": wire.AppendConfig(nil, &wire.Config{SystemPrompt: "Be brief.", Echo: true, Tools: []core.ToolSpec{{Name: "clock", Parameters: "{}"}},
			Limits: core.Limits{MaxSessions: 3, MaxMessageBytes: 1 << 20, MaxTotalBytes: 64 << 10}}),
		"model-oversize.bin": wire.AppendModelReply(nil, &wire.ModelReply{Handle: 2, Failed: true, Oversize: true, Error: "big"}),
		"refused.bin":        wire.AppendRefused(nil, core.NewIndexError(core.CodeInvalidHistory, 2, "bad")),
		"begin-repair.bin":   wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "x", Policy: core.Policy{Repair: true}}),
		"action-done-repaired.bin": wire.AppendAction(nil, &wire.Action{Handle: 4, Kind: wire.ActDone, Result: repairedResult(),
			Events: []core.Event{{Type: core.EventSessionSeeded, Seq: 2, Seed: &repairedResult().Seed}}}),
	}
}

// TestGolden checks the frames against testdata/golden (rewritten with
// -update), which the JavaScript implementation's test reads too.
func TestGolden(t *testing.T) { checkGolden(t, goldenFrames()) }

// checkGolden checks each frame against its file in testdata/golden, or
// with -update writes the file.
func checkGolden(t *testing.T, frames map[string][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "golden")
	for name, b := range frames {
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s: got % x, want % x", name, b, want)
		}
	}
}

// committed is the golden committed frame's outcome: the message count
// after the commit of commit.bin, and two dropped sessions.
func committed() *wire.Committed {
	return &wire.Committed{Count: 202, Dropped: []string{"old", "é"}}
}
