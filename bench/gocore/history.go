package gocore

import (
	"strconv"
	"strings"

	"github.com/agentrt/agentrt/core"
)

// The generator of bench/history.mjs, message for message: keep the two in
// sync (same words, same xorshift32, same order of draws).
var words = []string{
	"the", "runtime", "keeps", "sessions", "in", "memory", "while", "host",
	"stores", "durable", "history", "and", "seeds", "cold", "turns", "once",
	"model", "answers", "with", "tool", "calls", "café", "naïve", "résumé",
	"phone", "webview", "worker", "isolate", "quickly", "garden", "river", "über",
}

type xorshift32 uint32

func (x *xorshift32) next() uint32 {
	v := uint32(*x)
	v ^= v << 13
	v ^= v >> 17
	v ^= v << 5
	*x = xorshift32(v)
	return v
}

func text(r *xorshift32, target int) string {
	var parts []string
	bytes := -1
	for bytes < target {
		w := words[r.next()%uint32(len(words))]
		parts = append(parts, w)
		bytes += len(w) + 1
	}
	return strings.Join(parts, " ")
}

// History returns the n messages of makeHistory(n) in bench/history.mjs:
// the workload of every seeding and turn benchmark, in Go and in
// JavaScript.
func History(n int) []core.SeedMessage {
	r := xorshift32(0x9e3779b9)
	body := func() string {
		target := 200 + int(r.next()%101)
		return text(&r, target)
	}
	out := make([]core.SeedMessage, n)
	for i := range out {
		k := strconv.Itoa(i / 10)
		id := "m" + strconv.Itoa(i)
		switch i % 10 {
		case 1:
			out[i] = core.SeedMessage{Role: core.RoleAssistant, ContentMissing: true, ID: id,
				ToolCalls: []core.ToolCall{{ID: "call_" + k, Name: "lookup", Arguments: `{"q":"` + text(&r, 12) + `"}`}}}
		case 2:
			out[i] = core.SeedMessage{Role: core.RoleTool, Content: body(), ToolCallID: "call_" + k, ID: id}
		case 0, 4, 6, 8:
			out[i] = core.SeedMessage{Role: core.RoleUser, Content: body(), ID: id}
		default:
			out[i] = core.SeedMessage{Role: core.RoleAssistant, Content: body(), ID: id}
		}
	}
	return out
}
