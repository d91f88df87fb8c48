package hostmsg_test

import (
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// Ensure ReadApprovals reads a run's approvals as every edge takes them,
// and refuses each malformed one naming the entry and its field.
func TestReadApprovals(t *testing.T) {
	for _, c := range []struct {
		json   string
		signed bool
		want   []core.Approval
		msg    string
	}{
		{`[{"toolCallId":"c1","approved":true}]`, false, []core.Approval{{ToolCallID: "c1", Approved: true}}, ""},
		{`[{"toolCallId":"c1","approved":false,"reason":"no"},{"toolCallId":"c2","approved":true,"reason":null}]`, false,
			[]core.Approval{{ToolCallID: "c1", Reason: "no"}, {ToolCallID: "c2", Approved: true}}, ""},
		{`[{"toolCallId":"c1","approved":true,"signature":"s"}]`, true, []core.Approval{{ToolCallID: "c1", Approved: true, Signature: "s"}}, ""},
		{`[{"toolCallId":"c1","approved":true,"signature":"s"}]`, false, nil, `a[0] has an unknown field "signature"`},
		{`{}`, false, nil, "a must be a non-empty array"},
		{`[]`, false, nil, "a must be a non-empty array"},
		{`null`, false, nil, "a must be a non-empty array"},
		{`[1]`, false, nil, "a[0] must be an object"},
		{`[{"toolCallId":"c1","approved":true},null]`, false, nil, "a[1] must be an object"},
		{`[{"approved":true}]`, false, nil, "a[0].toolCallId must be a non-empty string"},
		{`[{"toolCallId":"","approved":true}]`, false, nil, "a[0].toolCallId must be a non-empty string"},
		{`[{"toolCallId":"c1"}]`, false, nil, "a[0].approved must be a boolean"},
		{`[{"toolCallId":"c1","approved":"yes"}]`, false, nil, "a[0].approved must be a boolean"},
		{`[{"toolCallId":"c1","approved":true,"reason":7}]`, false, nil, "a[0].reason must be a string"},
		{`[{"toolCallId":"c1","approved":true,"signature":7}]`, true, nil, "a[0].signature must be a string"},
		{`[{"toolCallId":"c1","approved":true,"Approved":false}]`, false, nil, `a[0] has an unknown field "Approved"`},
		{`[{"toolCallId":"c1","approved":true,"approved":false}]`, false, nil, `a[0] has the field "approved" twice`},
	} {
		v, err := hostjson.Parse([]byte(c.json))
		if err != nil {
			t.Fatal(err)
		}
		got, msg := hostmsg.ReadApprovals(v, "a", c.signed)
		if msg != c.msg || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s (signed %v) = %+v, %q; want %+v, %q", c.json, c.signed, got, msg, c.want, c.msg)
		}
	}
}
