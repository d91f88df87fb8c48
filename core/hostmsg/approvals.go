package hostmsg

import "github.com/agentrt/agentrt/core"

// FieldSignature is the field of a run's approval that carries the
// signature of its call (docs/adr/0023-approval-trust.md).
const FieldSignature = "signature"

// ReadApprovals reads a run's approvals (docs/adr/0019-tool-approvals.md),
// the one reader of every edge that takes them as host values (the
// syscall/js API's options.approvals, the HTTP body's approvals): list
// must be a non-empty array of objects {toolCallId: a non-empty string,
// approved: a boolean, reason?: a string or null}, and, when signed is
// set, signature?: a string or null. An entry with any other field, or a
// field twice, is refused. It returns what is wrong, naming the entry
// after at ("options.approvals[1].approved must be a boolean"), or "";
// the edge refuses it with core.CodeInvalidArgument.
func ReadApprovals[V Value[V]](list V, at string, signed bool) ([]core.Approval, string) {
	if list.Kind() != Array || list.Len() == 0 {
		return nil, at + " must be a non-empty array"
	}
	return decisions(list, at, false, signed)
}

// decisions reads the decisions of list: a run's approvals, each entry
// one (ReadApprovals), or, with parts set, the parts of a UIMessage, each
// in state StateApprovalResponded one, its decision in its approval
// (Approvals); other parts are skipped. One function for both, so that
// a module that reads both links it once.
func decisions[V Value[V]](list V, at string, parts, signed bool) ([]core.Approval, string) {
	var out []core.Approval
	for i, n := 0, list.Len(); i < n; i++ {
		e := list.Index(i)
		ei := at + "[" + itoa(i) + "]"
		d, dn := e, ei // the decision and its name
		if parts {
			if e.Kind() != Object || e.Get(FieldState).Kind() != String || e.Get(FieldState).Text() != StateApprovalResponded {
				continue
			}
			d, dn = e.Get(FieldApproval), ei+"."+FieldApproval
		} else if e.Kind() != Object {
			return nil, ei + " must be an object"
		} else if msg := approvalKeys(e.Keys(), signed); msg != "" {
			return nil, ei + msg
		}
		id, ok := optString(e.Get(FieldToolCallIDCamel))
		if !ok || id == "" {
			return nil, ei + ".toolCallId must be a non-empty string"
		}
		a, msg := decision(d, dn)
		if msg != "" {
			return nil, msg
		}
		a.ToolCallID = id
		if signed {
			if a.Signature, ok = optString(e.Get(FieldSignature)); !ok {
				return nil, ei + ".signature must be a string"
			}
		}
		out = append(out, a)
	}
	return out, ""
}

// approvalKeys checks the keys of an approval: each one of its fields,
// and none twice. It returns what is wrong after the entry's name, or "".
func approvalKeys(keys []string, signed bool) string {
	var seen, bit uint8
	for _, k := range keys {
		switch k {
		case FieldToolCallIDCamel:
			bit = 1
		case FieldApproved:
			bit = 2
		case FieldReason:
			bit = 4
		case FieldSignature:
			bit = 8
		default:
			bit = 0
		}
		if bit == 0 || bit == 8 && !signed {
			return " has an unknown field " + quote(k)
		}
		if seen&bit != 0 {
			return " has the field " + quote(k) + " twice"
		}
		seen |= bit
	}
	return ""
}
