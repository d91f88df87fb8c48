package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// historyFile is chat's history file: the host's durable copy of the
// conversation, a JSON array of messages in any shape of docs/contract.md.
// The messages it holds are written back byte for byte as the file had
// them (only re-indented), so their keys keep the host's order; the
// messages chat adds are written in the order of fileMessage.
type historyFile struct {
	path   string
	raw    []json.RawMessage  // each message as the file holds it
	values []any              // each message decoded: the host's history a run gets
	seed   []core.SeedMessage // the messages they seed, read by hostmsg
}

// readHistory reads the history file at path: a missing file is an empty
// history; a message of the wrong shape fails with its index.
func readHistory(path string) (*historyFile, error) {
	h := &historyFile{path: path, raw: []json.RawMessage{}, values: []any{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return nil, err
	}
	if err := h.set(b); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return h, nil
}

// set reads the JSON array b into h.
func (h *historyFile) set(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("not a JSON array of messages: %v", err)
	}
	values := make([]any, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &values[i]); err != nil {
			return err
		}
	}
	v, err := hostjson.Parse(b)
	if err != nil {
		return err
	}
	seed, err := hostmsg.Messages(v, 0)
	if err != nil {
		return err
	}
	if raw == nil {
		raw, values = []json.RawMessage{}, []any{}
	}
	h.raw, h.values, h.seed = raw, values, seed
	return nil
}

// fileMessage is a message chat adds to the file, in the module's shape
// (docs/cli.md, "The history file"), its keys in this order.
type fileMessage struct {
	Role       core.Role       `json:"role"`
	Content    string          `json:"content"`
	ToolCalls  []core.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ID         string          `json:"id,omitempty"`
}

// append adds a turn's messages (a result's appended) to h; write stores
// them.
func (h *historyFile) append(msgs []core.SeedMessage) error {
	for _, m := range msgs {
		b, err := json.Marshal(fileMessage{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, ID: m.ID})
		if err != nil {
			return err
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		h.raw, h.values = append(h.raw, b), append(h.values, v)
	}
	h.seed = append(h.seed, msgs...)
	return nil
}

// heal replaces h's messages with repaired, the host's history with a
// seed's repairs applied (a result's seed.repaired, in the file's own
// shapes): a message equal to one of the file's, in order, is kept as
// the file has it; the others (a repair's marker, a message a marker
// became part of) are written with their keys in a fixed order.
func (h *historyFile) heal(repaired []any) error {
	raw := make([]json.RawMessage, len(repaired))
	next := 0
	for i, r := range repaired {
		for k := next; k < len(h.values); k++ {
			if reflect.DeepEqual(h.values[k], r) {
				raw[i], next = h.raw[k], k+1
				break
			}
		}
		if raw[i] != nil {
			continue
		}
		var b bytes.Buffer
		if err := encodeOrdered(&b, r); err != nil {
			return err
		}
		raw[i] = b.Bytes()
	}
	b, err := encodeArray(raw)
	if err != nil {
		return err
	}
	return h.set(b)
}

// write replaces the file with h's messages, atomically (see
// replaceFile), one message per element, indented by two spaces.
func (h *historyFile) write() error {
	b, err := encodeArray(h.raw)
	if err != nil {
		return err
	}
	return replaceFile(h.path, b)
}

// syncFile flushes f (named name) to its storage; a test replaces it to
// see when replaceFile syncs.
var syncFile = func(name string, f *os.File) error { return f.Sync() }

// replaceFile replaces the file at path with b through a temporary file
// beside it and a rename, so that a crash leaves the old file or the new
// one, whole. The file keeps its permission bits (a history of 0600 stays
// 0600); a new one is created 0644, less the umask. The temporary file is
// synced before the rename, so the rename never makes a file whose bytes
// are not yet stored, and the directory after it, so the rename itself
// is stored; a system that cannot open or sync a directory skips that
// step. On failure the temporary file is removed and path is unchanged.
func replaceFile(path string, b []byte) (err error) {
	perm, existed := os.FileMode(0o644), false
	if fi, err := os.Stat(path); err == nil {
		perm, existed = fi.Mode().Perm(), true
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// The mode given to OpenFile applies only to a file it creates, less
	// the umask: a temporary file left by a process killed mid-write, or
	// a history whose mode the umask would narrow, gets the mode here.
	if existed {
		if err := f.Chmod(perm); err != nil {
			return err
		}
	}
	if _, err := f.Write(b); err != nil {
		return err
	}
	if err := syncFile(tmp, f); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		syncFile(filepath.Dir(path), d) // best effort: some systems refuse it
		d.Close()
	}
	return nil
}

// encodeArray writes raw as an indented JSON array, keeping each
// element's keys in their order.
func encodeArray(raw []json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return []byte("[]\n"), nil
	}
	var b bytes.Buffer
	b.WriteString("[\n  ")
	for i, r := range raw {
		if i > 0 {
			b.WriteString(",\n  ")
		}
		if err := json.Indent(&b, r, "  ", "  "); err != nil {
			return nil, err
		}
	}
	b.WriteString("\n]\n")
	return b.Bytes(), nil
}

// keyOrder is the order encodeOrdered writes the keys it knows, before
// the others (sorted): a message's, then a part's or a call's.
var keyOrder = []string{"id", "role", "content", "parts", "tool_calls", "tool_call_id", "toolCallId", "type", "name", "arguments", "function", "text", "state", "input", "output", "errorText"}

// encodeOrdered writes v (a value encoding/json decoded) as compact JSON,
// the keys of each object in keyOrder, not in the alphabetical order
// encoding/json gives maps.
func encodeOrdered(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		rank := func(k string) int {
			for i, o := range keyOrder {
				if o == k {
					return i
				}
			}
			return len(keyOrder)
		}
		sort.Slice(keys, func(i, j int) bool {
			ri, rj := rank(keys[i]), rank(keys[j])
			if ri != rj {
				return ri < rj
			}
			return keys[i] < keys[j]
		})
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			if err := encodeOrdered(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeOrdered(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		vb, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(vb)
	}
	return nil
}
