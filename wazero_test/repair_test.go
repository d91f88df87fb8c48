package wazero_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/jshost"
)

// checkAndRepair runs a corpus case's history through the module's
// checkHistory and, when the case says what repair does, through a run
// with policy.repair and inspect on session id+"-repaired", and checks
// both against the case.
func checkAndRepair(t *testing.T, in *jshost.Instance, rt jshost.Value, c *contract.Case, hist jshost.Value, id string) {
	t.Helper()
	v, err := in.Call(context.Background(), rt, "checkHistory", hist)
	if err != nil {
		t.Fatalf("checkHistory: %v", err)
	}
	var check struct {
		OK       *bool              `json:"ok"`
		Problems []contract.Problem `json:"problems"`
	}
	if b, err := json.Marshal(in.Export(v)); err != nil || json.Unmarshal(b, &check) != nil || check.OK == nil {
		t.Fatalf("checkHistory answered %v, not {ok, problems}", in.Export(v))
	}
	c.CheckProblems(t, *check.OK, check.Problems)
	if c.Repaired == nil {
		return
	}
	id += "-repaired"
	v, err = in.CallAsync(context.Background(), rt, "startRunWithPolicyAndHistory", id, "next",
		map[string]any{"repair": true}, hist, map[string]any{"inspect": true})
	if err != nil {
		var ex *jshost.Exception
		if !errors.As(err, &ex) {
			t.Fatalf("startRunWithPolicyAndHistory: %v", err)
		}
		c.CheckRepaired(t, nil, nil, nil, &contract.Refusal{Code: ex.Code, Index: ex.Index, Message: ex.Message})
		return
	}
	var res struct {
		Seed struct {
			Repairs  []contract.RepairRecord `json:"repairs"`
			Repaired json.RawMessage         `json:"repaired"`
		} `json:"seed"`
		ModelCalls []struct {
			Messages []map[string]any `json:"messages"`
		} `json:"modelCalls"`
	}
	if b, err := json.Marshal(in.Export(v)); err != nil || json.Unmarshal(b, &res) != nil || len(res.ModelCalls) == 0 {
		t.Fatalf("result %v: %v", in.Export(v), err)
	}
	s, _ := callSession(t, in, rt, id).(map[string]any)
	list, _ := s["messages"].([]any)
	if len(list) == 0 {
		t.Fatalf("no session after a repaired run")
	}
	held := make([]map[string]any, len(list)-1)
	for j := range held {
		m, _ := list[j].(map[string]any)
		held[j] = contract.CanonicalMap(m)
	}
	request := make([]map[string]any, len(res.ModelCalls[0].Messages))
	for j, m := range res.ModelCalls[0].Messages {
		request[j] = contract.CanonicalMap(m)
	}
	c.CheckRepaired(t, request, held, res.Seed.Repairs, nil)
	// The healed copy is rendered from a history array; a packed history
	// has none (its host heals its own copy: core.RepairedHistory).
	if _, isArray := in.Export(hist).([]any); isArray {
		c.CheckHealed(t, res.Seed.Repaired)
	} else if res.Seed.Repaired != nil {
		t.Fatalf("a packed history got seed.repaired %s", res.Seed.Repaired)
	}
}
