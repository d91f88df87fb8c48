package openai_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/openai"
)

// liveKey has characters that JSON and URLs escape differently.
const liveKey = "sk-proj_AbC/dEf+gH.iJ~kLmNoP0123456789qRsTuVwX"

// encodings are the ways a key travels in upstream text.
var encodings = []struct {
	name string
	enc  func(string) string
}{
	{"raw", func(k string) string { return k }},
	{"json", func(k string) string { b, _ := json.Marshal(k); return strings.Trim(string(b), `"`) }},
	{"json-every-char", func(k string) string {
		var b strings.Builder
		for i := 0; i < len(k); i++ {
			fmt.Fprintf(&b, `\u%04x`, k[i])
		}
		return b.String()
	}},
	{"json-twice", func(k string) string {
		b, _ := json.Marshal(`{"key":"` + strings.ReplaceAll(k, "/", `\/`) + `"}`)
		return strings.Trim(string(b), `"`)
	}},
	{"json-mixed-upper", func(k string) string {
		var b strings.Builder
		for i := 0; i < len(k); i++ {
			if i%3 == 0 {
				fmt.Fprintf(&b, `\u%04X`, k[i])
			} else {
				b.WriteByte(k[i])
			}
		}
		return b.String()
	}},
	{"url-query", url.QueryEscape},
	{"url-every-char", func(k string) string {
		var b strings.Builder
		for i := 0; i < len(k); i++ {
			fmt.Fprintf(&b, "%%%02x", k[i])
		}
		return b.String()
	}},
	{"url-twice", func(k string) string { return url.QueryEscape(url.QueryEscape(k)) }},
	{"base64-bearer", func(k string) string { return base64.StdEncoding.EncodeToString([]byte("Bearer " + k)) }},
	{"base64-basic", func(k string) string { return base64.StdEncoding.EncodeToString([]byte("user:" + k)) }},
	{"base64url-key", func(k string) string { return base64.RawURLEncoding.EncodeToString([]byte(k)) }},
	{"base64-offset2", func(k string) string { return base64.StdEncoding.EncodeToString([]byte("ab" + k + "c")) }},
}

// leaks reports a piece of the key (any 8 bytes of it) in s, or of its
// encoded form enc (any 12 bytes), or "".
func leaks(s, key, enc string) string {
	for i := 0; i+8 <= len(key); i++ {
		if strings.Contains(s, key[i:i+8]) {
			return key[i : i+8]
		}
	}
	for i := 0; i+12 <= len(enc); i++ {
		if strings.Contains(s, enc[i:i+12]) {
			return enc[i : i+12]
		}
	}
	return ""
}

// Ensure Redact removes the key in every encoding, and leaves text
// without it alone.
func TestRedact(t *testing.T) {
	for _, e := range encodings {
		t.Run(e.name, func(t *testing.T) {
			enc := e.enc(liveKey)
			got := openai.Redact("before "+enc+" after "+enc, liveKey)
			if l := leaks(got, liveKey, enc); l != "" {
				t.Errorf("%q leaks %q", got, l)
			}
			if !strings.HasPrefix(got, "before ") || !strings.Contains(got, openai.Redacted) {
				t.Errorf("got %q", got)
			}
		})
	}
	for _, s := range []string{"", "plain text", "sk-proj_ alone", `\u0073k-`, "%7", `\`} {
		if got := openai.Redact(s, liveKey); got != s {
			t.Errorf("Redact(%q) = %q, want it unchanged", s, got)
		}
	}
	if got := openai.Redact("abc", "abc"); got != "abc" {
		t.Errorf("a 3-byte secret was redacted: %q", got)
	}
}

// Ensure the key never reaches an error message whatever its offset
// around the 200-byte cut, raw, escaped or encoded: the upstream's error
// message quotes it after filler of every length from 150 to 260 bytes.
func TestModel_Complete_ErrorRedactsKeyAtEveryOffset(t *testing.T) {
	var quoted string
	_, m := mustServer(t, func(w http.ResponseWriter, _ map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": quoted}})
		w.Write(b)
	})
	m.Key = liveKey
	for _, e := range encodings {
		enc := e.enc(liveKey)
		for off := 150; off <= 260; off++ {
			quoted = strings.Repeat("x", off) + enc + " was refused"
			_, err := m.Complete(t.Context(), &core.ModelRequest{Messages: []core.Message{{Role: "user", Content: "x"}}, Delta: func(string) {}})
			msg := err.Error()
			if core.ErrorCode(err) != core.CodeModelError || len(msg) > 300 {
				t.Fatalf("%s at %d: got %v", e.name, off, err)
			}
			if l := leaks(msg, liveKey, enc); l != "" {
				t.Fatalf("%s at offset %d: the message leaks %q: %q", e.name, off, l, msg)
			}
		}
	}
}

// Ensure a key in a network error (here in the URL the client failed to
// reach) is redacted before the message is cut.
func TestModel_Complete_NetworkErrorRedactsKey(t *testing.T) {
	for off := 150; off <= 260; off += 7 {
		m := &openai.Model{BaseURL: "http://h/v1", Key: liveKey, Client: failingDoer(strings.Repeat("y", off) + url.QueryEscape(liveKey))}
		_, err := m.Complete(t.Context(), &core.ModelRequest{Delta: func(string) {}})
		if l := leaks(err.Error(), liveKey, url.QueryEscape(liveKey)); l != "" || core.ErrorCode(err) != core.CodeModelError {
			t.Fatalf("offset %d: %v leaks %q", off, err, l)
		}
	}
}

type failingDoer string

func (d failingDoer) Do(*http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("%s", string(d))
}

var _ openai.Doer = failingDoer("")

// FuzzRedact checks that the raw key never survives Redact, whatever
// surrounds it, and that Redact never panics. (A key sharing a byte with
// the marker could be spelt anew across it; such keys are only checked
// for panics.)
func FuzzRedact(f *testing.F) {
	f.Add("prefix ", " suffix", liveKey)
	f.Add(`\\u00`, "%2", "abcd")
	f.Add("", "", `k\ey%2F"/`)
	f.Fuzz(func(t *testing.T, before, after, key string) {
		out := openai.Redact(before+key+after, key)
		if len(key) >= 4 && !strings.ContainsAny(key, openai.Redacted) && strings.Contains(out, key) {
			t.Errorf("Redact(%q) = %q keeps the key", before+key+after, out)
		}
	})
}
