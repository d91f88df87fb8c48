package openai_test

import (
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/openai"
)

// sseAnswer writes each event as "data: <event>\n\n", then [DONE].
func sseAnswer(events ...string) func(http.ResponseWriter, map[string]any) {
	return func(w http.ResponseWriter, _ map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\n\n")
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

// Ensure an answer over Model.MaxResponseBytes fails with model_error
// naming the bound, plain JSON and streamed alike (a stream cut at the
// bound must not read as a shorter, complete reply), and that an answer
// of exactly the bound is read.
func TestModel_Complete_AnswerOverBound(t *testing.T) {
	const bound = 64 << 10
	huge := strings.Repeat("x", 4*bound)
	event := `{"choices":[{"delta":{"content":"` + strings.Repeat("y", 1000) + `"}}]}`
	events := make([]string, 4*bound/len(event))
	for i := range events {
		events[i] = event
	}
	for _, tc := range []struct {
		name   string
		stream bool
		answer func(http.ResponseWriter, map[string]any)
	}{
		{"plain", false, jsonAnswer(`{"choices":[{"message":{"role":"assistant","content":"` + huge + `"}}]}`)},
		{"plain-trailing-space", false, jsonAnswer(`{"choices":[{"message":{"role":"assistant","content":"ok"}}]}` + strings.Repeat(" ", 2*bound))},
		{"sse", true, sseAnswer(events...)},
		{"sse-one-event", true, sseAnswer(`{"choices":[{"delta":{"content":"` + huge + `"}}]}`)},
		{"sse-endless", true, func(w http.ResponseWriter, _ map[string]any) {
			w.Header().Set("Content-Type", "text/event-stream")
			for {
				if _, err := io.WriteString(w, "data: "+event+"\n\n"); err != nil {
					return // the client left
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, m := mustServer(t, tc.answer)
			m.Stream = tc.stream
			m.MaxResponseBytes = bound
			reply, err := m.Complete(t.Context(), &core.ModelRequest{Messages: []core.Message{{Role: "user", Content: "x"}}})
			var e *core.Error
			if !asError(err, &e) || e.Code != core.CodeModelError || !strings.Contains(e.Message, "larger than "+strconv.Itoa(bound)+" bytes") {
				n := -1
				if reply != nil {
					n = len(reply.Content)
				}
				t.Fatalf("got reply of %d bytes, error %v; want model_error naming the bound", n, err)
			}
		})
	}
	t.Run("exactly-the-bound", func(t *testing.T) {
		head := `{"choices":[{"message":{"role":"assistant","content":"`
		tail := `"}}]}`
		_, m := mustServer(t, jsonAnswer(head+strings.Repeat("z", bound-len(head)-len(tail))+tail))
		m.MaxResponseBytes = bound
		reply, err := m.Complete(t.Context(), &core.ModelRequest{})
		if err != nil || len(reply.Content) != bound-len(head)-len(tail) {
			t.Fatalf("got %v", err)
		}
	})
	if openai.DefaultMaxResponseBytes < 1<<20 {
		t.Errorf("DefaultMaxResponseBytes = %d, want a few MiB", openai.DefaultMaxResponseBytes)
	}
}

// Ensure a streamed tool call whose name some servers resend whole in
// later pieces keeps the name once (the rule of js/openai.js: a piece
// equal to the name so far is not appended), while a name sent in parts
// is joined.
func TestModel_Complete_StreamNameResent(t *testing.T) {
	_, m := mustServer(t, sseAnswer(
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"look","arguments":"{\"q\""}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"look","arguments":":1"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"look","arguments":"}"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"get_","arguments":""}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"name":"time"}}]}}]}`,
	))
	m.Stream = true
	reply, err := m.Complete(t.Context(), &core.ModelRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []core.ToolCall{{ID: "c1", Name: "look", Arguments: `{"q":1}`}, {ID: "c2", Name: "get_time", Arguments: "{}"}}
	if len(reply.ToolCalls) != 2 || reply.ToolCalls[0] != want[0] || reply.ToolCalls[1] != want[1] {
		t.Errorf("tool calls: got %+v, want %+v", reply.ToolCalls, want)
	}
}

// Ensure many small argument fragments are joined in linear memory: the
// bytes allocated while reading 10000 fragments of 10 bytes stay within
// a small multiple of the stream's size (appending with += allocates the
// growing string again for every fragment, about 500 MB here).
func TestModel_Complete_StreamManyFragments(t *testing.T) {
	const n, piece = 10000, `"abcdefgh"`
	events := make([]string, 0, n+2)
	events = append(events, `{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"["}}]}}]}`)
	frag := `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + strings.ReplaceAll(piece, `"`, `\"`) + `,"}}]}}]}`
	for i := 0; i < n; i++ {
		events = append(events, frag)
	}
	events = append(events, `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"0]"}}]}}]}`)
	_, m := mustServer(t, sseAnswer(events...))
	m.Stream = true
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	reply, err := m.Complete(t.Context(), &core.ModelRequest{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	want := "[" + strings.Repeat(piece+",", n) + "0]"
	if len(reply.ToolCalls) != 1 || reply.ToolCalls[0].Arguments != want {
		t.Fatalf("arguments: got %d bytes, want %d", len(reply.ToolCalls[0].Arguments), len(want))
	}
	streamBytes := n * len(frag)
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(64*streamBytes) {
		t.Errorf("reading a %d-byte stream allocated %d bytes (%.0fx), want linear (at most 64x)", streamBytes, got, float64(got)/float64(streamBytes))
	} else {
		t.Logf("reading a %d-byte stream allocated %d bytes (%.1fx)", streamBytes, got, float64(got)/float64(streamBytes))
	}
}
