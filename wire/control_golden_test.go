package wire_test

import (
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// controlGolden are the control exports' frames both implementations
// must write and read byte for byte: js/test/control.test.mjs reads the
// same files.
func controlGolden() map[string][]byte {
	return map[string][]byte{
		"op.bin":         wire.AppendOp(nil, "revertRun", wire.Text("sé"), wire.Text("glue:7"), wire.Value{}),
		"value.bin":      wire.AppendValue(nil, wire.Text("é")),
		"value-true.bin": wire.AppendValue(nil, wire.Bool(true)),
		"check.bin": wire.AppendCheck(nil, &core.HistoryCheck{
			Problems: []core.Problem{
				{Code: core.CodeInvalidHistory, Index: 1, Message: "orphan", Repair: core.RepairOrphanToolResult},
				{Code: core.CodeLimitExceeded, Index: core.NoIndex, Message: "é"},
			},
			Awaiting: []core.AwaitingCall{{Index: 3, ToolCallID: "c1", Name: "clock", Arguments: `{"tz":"é"}`}},
			Paused:   true,
			Head:     "h1-g5foW_vpddqFPIhHk0erIg",
		}),
		"check-ok.bin": wire.AppendCheck(nil, &core.HistoryCheck{OK: true}),
	}
}

// TestGolden_Control checks the control frames against testdata/golden
// (rewritten with -update).
func TestGolden_Control(t *testing.T) { checkGolden(t, controlGolden()) }
