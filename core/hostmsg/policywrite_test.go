package hostmsg_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
)

// Ensure AppendPolicyJSON writes JSON that reads back as the same
// policy, leaves zero fields out, and writes the values core refuses as
// they are.
func TestAppendPolicyJSON(t *testing.T) {
	for _, tc := range []struct {
		p    core.Policy
		want string
	}{
		{core.Policy{}, `{}`},
		{core.Policy{Repair: true}, `{"repair":true}`},
		{core.Policy{AllowedTools: []string{}}, `{"allowedTools":[]}`},
		{core.Policy{SeedMode: core.SeedReconcile, MaxSteps: 3, TimeoutMs: -1, AllowedTools: []string{"t", "u\"\n\\"}},
			`{"seedMode":"reconcile","maxSteps":3,"timeoutMs":-1,"allowedTools":["t","u\"\u000a\\"]}`},
		{core.Policy{OnBusy: core.BusyReject, ToolErrors: core.ToolErrorsReport, MaxContextMessages: 4, MaxContextBytes: 1 << 40,
			MaxContextTokens: 8000, ContextChunkTokens: 1000},
			`{"onBusy":"reject","toolErrors":"report","maxContextMessages":4,"maxContextBytes":1099511627776,"maxContextTokens":8000,"contextChunkTokens":1000}`},
		{core.Policy{AllowedTools: []string{"é\xff"}, MaxContextBytes: math.MinInt64}, `{"maxContextBytes":-9223372036854775808,"allowedTools":["é\ufffd"]}`},
	} {
		got := string(hostmsg.AppendPolicyJSON(nil, &tc.p))
		if got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.p, got, tc.want)
		}
		var v any
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Errorf("%s is not JSON: %v", got, err)
		}
	}
	// Every field crosses: a policy with all of them set reads back.
	p := core.Policy{SeedMode: core.SeedReconcile, OnBusy: core.BusyReject, ToolErrors: core.ToolErrorsReport, MaxSteps: 2,
		MaxContextMessages: 3, MaxContextBytes: 4, TimeoutMs: 5, MaxContextTokens: 600, ContextChunkTokens: 7,
		AllowedTools: []string{"a"}, Repair: true}
	got, err := hostmsg.Policy(parse(t, string(hostmsg.AppendPolicyJSON(nil, &p))))
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("read back: %+v, %v; want %+v", got, err, p)
	}
}
