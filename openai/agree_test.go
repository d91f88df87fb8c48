package openai_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// The tests here pin the rules the Go model shares with js/openai.js for
// reading the same answers (js/test/openai.test.mjs checks the same).

// Ensure an error object sent in the middle of a stream fails the call
// with model_error carrying the server's message without the key, rather
// than ending the stream as a shorter reply; likewise a 2xx plain answer
// that is an error object.
func TestModel_Complete_ErrorInAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream bool
		answer func(http.ResponseWriter, map[string]any)
		want   string
	}{
		{"sse-error-object", true, sseAnswer(`{"choices":[{"delta":{"content":"par"}}]}`, `{"error":{"message":"overloaded, key `+key+`","type":"server_error"}}`), "overloaded, key [redacted]"},
		{"sse-error-no-message", true, sseAnswer(`{"error":{"code":529}}`), `{"code":529}`},
		{"sse-error-string", true, sseAnswer(`{"error":"overloaded"}`), `"overloaded"`},
		{"plain-error-object", false, jsonAnswer(`{"error":{"message":"quota exceeded for ` + key + `"}}`), "quota exceeded for [redacted]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, m := mustServer(t, tc.answer)
			m.Stream = tc.stream
			reply, err := m.Complete(t.Context(), &core.ModelRequest{})
			var e *core.Error
			if !asError(err, &e) || e.Code != core.CodeModelError || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("got reply %+v, error %v; want model_error containing %q", reply, err, tc.want)
			}
			if strings.Contains(e.Message, key) {
				t.Errorf("the message shows the key: %q", e.Message)
			}
		})
	}
	// An "error": null is no error.
	_, m := mustServer(t, sseAnswer(`{"error":null,"choices":[{"delta":{"content":"fine"}}]}`))
	m.Stream = true
	if reply, err := m.Complete(t.Context(), &core.ModelRequest{}); err != nil || reply.Content != "fine" {
		t.Errorf("error null: got %+v, %v", reply, err)
	}
}

// Ensure tool-call arguments sent as a JSON object rather than a string
// (as some servers do) are read as that object's JSON text, plain and
// streamed, and that arguments of only spaces, or null, read as "{}".
func TestModel_Complete_ObjectArguments(t *testing.T) {
	_, m := mustServer(t, jsonAnswer(`{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[`+
		`{"id":"c1","type":"function","function":{"name":"t","arguments":{"x": 1, "y": [true]}}},`+
		`{"id":"c2","type":"function","function":{"name":"u","arguments":null}},`+
		`{"id":"c3","type":"function","function":{"name":"v","arguments":"  "}}]}}]}`))
	reply, err := m.Complete(t.Context(), &core.ModelRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []core.ToolCall{{ID: "c1", Name: "t", Arguments: `{"x":1,"y":[true]}`}, {ID: "c2", Name: "u", Arguments: "{}"}, {ID: "c3", Name: "v", Arguments: "{}"}}
	if len(reply.ToolCalls) != 3 || reply.ToolCalls[0] != want[0] || reply.ToolCalls[1] != want[1] || reply.ToolCalls[2] != want[2] {
		t.Errorf("plain: got %+v, want %+v", reply.ToolCalls, want)
	}

	_, m = mustServer(t, sseAnswer(
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"t","arguments":{"x": 1}}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"u","arguments":" "}}]}}]}`,
	))
	m.Stream = true
	reply, err = m.Complete(t.Context(), &core.ModelRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want = []core.ToolCall{{ID: "c1", Name: "t", Arguments: `{"x":1}`}, {ID: "c2", Name: "u", Arguments: "{}"}}
	if len(reply.ToolCalls) != 2 || reply.ToolCalls[0] != want[0] || reply.ToolCalls[1] != want[1] {
		t.Errorf("streamed: got %+v, want %+v", reply.ToolCalls, want)
	}
}

// Ensure an answer that ends with [DONE] within the bound stands, however
// much follows it in the same read (what follows is not the answer), and
// that [DONE] with spaces around it ends the stream too.
// The bound is small, so that the read that crosses it also holds the
// whole answer.
func TestModel_Complete_DoneWithinBound(t *testing.T) {
	const bound = 256
	for _, tc := range []struct{ name, done, after string }{
		{"junk-after", "data: [DONE]\n\n", strings.Repeat("x", 8*bound)},
		{"events-after", "data: [DONE]\n\n", strings.Repeat(`data: {"choices":[{"delta":{"content":"no"}}]}`+"\n\n", 8*bound/40)},
		{"spaces", "data:  [DONE] \r\n\r\n", strings.Repeat("x", 8*bound)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, m := mustServer(t, func(w http.ResponseWriter, _ map[string]any) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, `data: {"choices":[{"delta":{"content":"whole"}}]}`+"\n\n"+tc.done+tc.after)
			})
			m.Stream = true
			m.MaxResponseBytes = bound
			reply, err := m.Complete(t.Context(), &core.ModelRequest{})
			if err != nil || reply.Content != "whole" {
				t.Fatalf("got %+v, %v; want the reply before [DONE]", reply, err)
			}
		})
	}
}

// Ensure a stream is read as Server-Sent Events, as js/openai.js reads
// it: an event's data lines are joined by "\n" up to a blank line (a
// chunk may span lines), comments and other fields are ignored, CRLF
// ends lines, and a last event without its blank line still counts.
func TestModel_Complete_EventsOfManyLines(t *testing.T) {
	for _, tc := range []struct {
		name, stream, want string
	}{
		{"multi-line", ": keep-alive\r\n\r\nevent: message\r\ndata: {\"choices\":[{\"index\":0,\r\ndata: \"delta\":{\"content\":\"a\"}}]}\r\n\r\n" +
			"id: 2\ndata:{\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\ndata: [DONE]\n\n", "ab"},
		{"done-without-blank-line", "data: {\"choices\":[{\"delta\":{\"content\":\"c\"}}]}\n\ndata: [DONE]", "c"},
		{"finished-without-done", "data: {\"choices\":[{\"delta\":{\"content\":\"d\"},\"finish_reason\":\"stop\"}]}\n", "d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, m := mustServer(t, func(w http.ResponseWriter, _ map[string]any) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tc.stream)
			})
			m.Stream = true
			reply, err := m.Complete(t.Context(), &core.ModelRequest{})
			if err != nil || reply.Content != tc.want {
				t.Fatalf("got %+v, %v; want content %q", reply, err, tc.want)
			}
		})
	}
	// A line that is only part of a chunk is not read as a chunk of its own.
	_, m := mustServer(t, func(w http.ResponseWriter, _ map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"delta\":\ndata: {\"content\":\"e\"}}]}\n\ndata: [DONE]\n\n")
	})
	m.Stream = true
	if reply, err := m.Complete(t.Context(), &core.ModelRequest{}); err != nil || reply.Content != "e" {
		t.Fatalf("split chunk: got %+v, %v", reply, err)
	}
}

// Ensure a stream that ends without [DONE] and without a finish_reason
// (a cut connection) fails the call model_error instead of standing as
// a shorter reply, and that either end marker makes the answer whole.
func TestModel_Complete_StreamCutShort(t *testing.T) {
	chunk := func(content, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"choices":[{"index":0,"delta":{"content":"` + content + `"},"finish_reason":` + f + "}]}\n\n"
	}
	for _, tc := range []struct {
		name, stream, want string
		cut                bool
	}{
		{"cut-mid-stream", chunk("The answer is", ""), "", true},
		{"cut-mid-event", chunk("The answer", "") + `data: {"choices":[{"delta":{"con`, "", true},
		{"cut-tool-call", `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{\"a\""}}]}}]}` + "\n\n", "", true},
		{"empty", "", "", true},
		{"finish-reason-no-done", chunk("whole", "") + chunk("", "stop"), "whole", false},
		{"tool-calls-finish-no-done", chunk("x", "tool_calls"), "x", false},
		{"done", chunk("whole", "") + "data: [DONE]\n\n", "whole", false},
		{"finish-and-done", chunk("whole", "stop") + "data: [DONE]\n\n", "whole", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, m := mustServer(t, func(w http.ResponseWriter, _ map[string]any) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tc.stream)
			})
			m.Stream = true
			reply, err := m.Complete(t.Context(), &core.ModelRequest{})
			if tc.cut {
				var ce *core.Error
				if !errors.As(err, &ce) || ce.Code != core.CodeModelError || reply != nil {
					t.Fatalf("got %+v, %v; want model_error", reply, err)
				}
				return
			}
			if err != nil || reply.Content != tc.want {
				t.Fatalf("got %+v, %v; want content %q", reply, err, tc.want)
			}
		})
	}
}
