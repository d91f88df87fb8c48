package durable

// This file holds the conversation as the object stored it, and the
// history a run is seeded with from it: the stored copy wins over a
// host's history that is a prefix of it.

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// load reads the stored messages as one JSON array.
func (h *Handler) load() ([]byte, error) {
	a, err := h.store.Load()
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.stats.Loads++
	h.mu.Unlock()
	return a, nil
}

// storedWins reports whether a session holding the stored messages would
// keep them when a run with body's history (the body of a request that
// has one) seeds it: with seed mode "if-empty" it keeps them whatever the
// history, with "reconcile" when the history is a prefix of them (core's
// seeding rules). A body the API will refuse (a history it does not
// take, or a policy it refuses) answers false: it goes to the API as it
// is, which refuses it whether or not the session is live. A history
// ending with calls the request's approvals answer is one the API takes
// (awaitsOnly): the stored messages win over it as over any other, so an
// old history cannot run an answered call again. In reconcile
// mode the stored messages read are returned with the answer; on a live
// session (which holds them) reconcile answers false without reading
// them: the runtime applies the rule itself.
func (h *Handler) storedWins(body []byte, live bool) (bool, []byte, error) {
	rb, derr := httpapi.DecodeRunBody(body)
	if derr != nil || !rb.WithHistory || rb.Policy.Validate() != nil {
		return false, nil, nil
	}
	if c := h.rt.CheckHistory(rb.History); !c.OK && !awaitsOnly(c, rb.Approvals) {
		if !rb.Policy.Repair {
			return false, nil, nil
		}
		for _, p := range c.Problems {
			if p.Repair == "" {
				return false, nil, nil
			}
		}
	}
	if rb.Policy.SeedMode != core.SeedReconcile {
		return true, nil, nil
	}
	if live {
		return false, nil, nil
	}
	history, err := h.load()
	if err != nil {
		return false, nil, err
	}
	sb, derr := httpapi.DecodeRunBody(append(append([]byte(`{"input":"","history":`), history...), '}'))
	if derr != nil {
		return false, nil, errors.New("the stored messages could not be read: " + derr.Message)
	}
	return core.IsPrefix(sessionMessages(rb.History), sessionMessages(sb.History)), history, nil
}

// sessionMessages are the session messages history seeds (its system
// messages left out, as the runtime does).
func sessionMessages(history []core.SeedMessage) []core.Message {
	out := make([]core.Message, 0, len(history))
	for i := range history {
		if history[i].Role != core.RoleSystem {
			out = append(out, history[i].Message())
		}
	}
	return out
}

// seedBody gives body (a JSON object) the stored messages as its history:
// history when it is not nil, else read from the Store. With replace set
// the body's own "history" (null or an array) is replaced; without it
// the body has none.
func (h *Handler) seedBody(body, history []byte, replace bool) ([]byte, error) {
	if history == nil {
		var err error
		if history, err = h.load(); err != nil {
			return nil, err
		}
	}
	if replace {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
			return nil, errors.New("the body is not a JSON object")
		}
		if a := carriedApprovals(fields); a != nil {
			fields["approvals"] = a
		}
		fields["history"] = history
		return json.Marshal(fields)
	}
	// No history key: splice it in after the object's opening brace,
	// without decoding the body again.
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errors.New("the body is not a JSON object")
	}
	rest := trimmed[1:]
	out := make([]byte, 0, len(body)+len(history)+16)
	out = append(out, `{"history":`...)
	out = append(out, history...)
	if r := bytes.TrimLeft(rest, " \t\r\n"); len(r) > 0 && r[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...), nil
}
