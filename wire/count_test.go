package wire_test

import (
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// countFrames are the golden frames of the token count: the count
// action, the counts frame (counts and a failure), and a config frame
// whose host counts. js/test/count.test.mjs reads them too.
func countFrames() map[string][]byte {
	return map[string][]byte{
		"action-count.bin": wire.AppendAction(nil, &sampleCount),
		"counts.bin":       wire.AppendCounts(nil, &wire.Counts{Handle: 9, Counts: []int{0, 7, 300, core.MaxTokenCount}}),
		"counts-failed.bin": wire.AppendCounts(nil, &wire.Counts{Handle: 9,
			Err: core.NewError(core.CodeInvalidArgument, "countTokens failed: no tokenizer")}),
		"config-count.bin": wire.AppendConfig(nil, &wire.Config{SystemPrompt: "s", CountByAction: true}),
	}
}

var sampleCount = wire.Action{Handle: 9, Kind: wire.ActCount,
	Events: []core.Event{{Type: core.EventRunStarted, Seq: 1}},
	Count: []core.Message{{Role: core.RoleSystem, Content: "Be brief."}, {Role: core.RoleUser, Content: "héllo"},
		{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c", Name: "n", Arguments: "{}"}}},
		{Role: core.RoleTool, ToolCallID: "c", Content: "42"}}}

// TestGoldenCount checks the count's frames against testdata/golden
// (rewritten with -update).
func TestGoldenCount(t *testing.T) { checkGolden(t, countFrames()) }

// Ensure the count action, the counts frame and the config flag survive
// the trip.
func TestCount_RoundTrip(t *testing.T) {
	a, err := wire.DecodeAction(wire.AppendAction(nil, &sampleCount))
	if err != nil {
		t.Fatal(err)
	}
	if a.Kind != wire.ActCount || !reflect.DeepEqual(a.Count, sampleCount.Count) || len(a.Events) != 1 {
		t.Fatalf("got %+v", a)
	}
	for _, c := range []wire.Counts{{Handle: 1, Counts: []int{}}, {Handle: 1 << 40, Counts: []int{1, 1 << 40}},
		{Handle: 2, Err: core.NewError(core.CodeTimeout, "slow")}} {
		got, err := wire.DecodeCounts(wire.AppendCounts(nil, &c))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*got, c) {
			t.Fatalf("got %+v, want %+v", *got, c)
		}
	}
	for _, c := range []wire.Config{{CountByAction: true}, {Echo: true, CountByAction: true}, {Echo: true}} {
		got, err := wire.DecodeConfig(wire.AppendConfig(nil, &c))
		if err != nil || got.CountByAction != c.CountByAction || got.Echo != c.Echo {
			t.Fatalf("config %+v: got %+v, %v", c, got, err)
		}
	}
}

// Ensure malformed counts frames and model bytes are refused
// invalid_argument.
func TestCount_ErrMalformed(t *testing.T) {
	ok := wire.AppendCounts(nil, &wire.Counts{Handle: 1, Counts: []int{3, 4}})
	bad := map[string][]byte{
		"truncated":   ok[:len(ok)-1],
		"trailing":    append(append([]byte(nil), ok...), 0),
		"status":      append(wire.AppendCounts(nil, &wire.Counts{Handle: 1})[:len(ok)-4], 2, 0),
		"count count": append(wire.AppendCounts(nil, &wire.Counts{Handle: 1})[:len(ok)-3], 5, 1),
		"huge count":  append(wire.AppendCounts(nil, &wire.Counts{Handle: 1})[:len(ok)-3], 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f),
		"wrong kind":  wire.AppendDelta(nil, &wire.Delta{Handle: 1}),
	}
	for name, b := range bad {
		if _, err := wire.DecodeCounts(b); core.ErrorCode(err) != core.CodeInvalidArgument {
			t.Errorf("%s: got %v", name, err)
		}
	}
	cfg := wire.AppendConfig(nil, &wire.Config{})
	cfg[5] = 0x04 // the model byte (after "ARC", the version and the empty prompt): a bit no module knows
	if _, err := wire.DecodeConfig(cfg); core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("unknown model bit: got %v", err)
	}
}
