// Package wasiconfig reads and writes the config frame a WASI host passes
// to agentrt_create: the runtime's system prompt, whether the module's
// built-in echo model answers model calls, the tools the model may call
// and the store's limits. See docs/wasi.md, "Config frame".
//
//	f := wasiconfig.Append(nil, &wasiconfig.Config{SystemPrompt: "Be brief."})
//	cfg, err := wasiconfig.Decode(f) // in the module
//
// Decode checks the whole frame and returns a *core.Error with code
// invalid_argument for anything malformed. Like package wire it avoids
// fmt, strconv and reflect: it is linked into the module.
package wasiconfig

import (
	"unicode/utf8"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// Magic opens a config frame: "ARC", then the version byte.
const Magic = "ARC"

// Version is the config frame version this package reads and writes.
const Version = 1

// Model bytes.
const (
	modelHost = 0 // the host answers model calls
	modelEcho = 1 // the module's built-in echo model answers them
)

// Config is what a config frame carries. The zero Config is a runtime
// whose host answers model calls, with no system prompt, no tools and
// the default limits.
type Config struct {
	SystemPrompt string
	// Echo makes the module's built-in echo model answer every model call
	// inside the module; false hands model calls to the host.
	Echo bool
	// Tools are the tools the model may call. The module sends each call
	// to the host (a tool action); it never runs a tool itself.
	Tools []core.ToolSpec
	// Limits bound the store; zero fields mean the defaults. A field
	// larger than the frame can carry is refused.
	Limits core.Limits
}

const maxInt32 = 1<<31 - 1

// Append appends a config frame for c. Negative limits are written as 0
// (the default); core.Limits.Validate is the place to refuse them.
func Append(dst []byte, c *Config) []byte {
	dst = append(dst, Magic...)
	dst = append(dst, Version)
	dst = wire.AppendString(dst, c.SystemPrompt)
	if c.Echo {
		dst = append(dst, modelEcho)
	} else {
		dst = append(dst, modelHost)
	}
	dst = wire.AppendUvarint(dst, uint64(len(c.Tools)))
	for i := range c.Tools {
		t := &c.Tools[i]
		dst = wire.AppendString(dst, t.Name)
		dst = wire.AppendString(dst, t.Description)
		dst = wire.AppendString(dst, t.Parameters)
	}
	l := &c.Limits
	for _, v := range [...]int64{int64(l.MaxSessions), int64(l.MaxMessagesPerSession), l.MaxSessionBytes,
		int64(l.MaxSeedMessages), l.MaxSeedBytes, l.MaxMessageBytes} {
		dst = wire.AppendUvarint(dst, uint64(max(v, 0)))
	}
	return dst
}

// Decode decodes a config frame. Tools with no name or a duplicate name
// are left for core.New to refuse.
func Decode(b []byte) (*Config, error) {
	r := reader{b: b}
	if len(b) < len(Magic)+1 || string(b[:len(Magic)]) != Magic {
		return nil, refuse("not a config frame (bad magic)")
	}
	if b[len(Magic)] != Version {
		return nil, refuse("unknown config frame version")
	}
	r.pos = len(Magic) + 1
	var c Config
	c.SystemPrompt = r.str("systemPrompt")
	switch r.byte() {
	case modelHost:
	case modelEcho:
		c.Echo = true
	default:
		r.fail("unknown model byte")
	}
	n := r.uvarint()
	if r.err == "" && n > uint64(len(b)-r.pos)/3 {
		r.fail("tool count is more than the frame can hold")
	}
	if r.err == "" && n > 0 {
		c.Tools = make([]core.ToolSpec, n)
		for i := range c.Tools {
			t := &c.Tools[i]
			t.Name = r.str("tool name")
			t.Description = r.str("tool description")
			t.Parameters = r.str("tool parameters")
		}
	}
	l := &c.Limits
	l.MaxSessions = int(r.limit("maxSessions", maxInt32))
	l.MaxMessagesPerSession = int(r.limit("maxMessagesPerSession", maxInt32))
	l.MaxSessionBytes = r.limit("maxSessionBytes", 1<<53)
	l.MaxSeedMessages = int(r.limit("maxSeedMessages", maxInt32))
	l.MaxSeedBytes = r.limit("maxSeedBytes", 1<<53)
	l.MaxMessageBytes = r.limit("maxMessageBytes", 1<<53)
	if r.err == "" && r.pos != len(b) {
		r.fail("bytes after the end of the frame")
	}
	if r.err != "" {
		return nil, refuse(r.err)
	}
	return &c, nil
}

func refuse(msg string) *core.Error {
	return core.NewError(core.CodeInvalidArgument, "config frame: "+msg)
}

// reader reads a frame, keeping the first failure.
type reader struct {
	b   []byte
	pos int
	err string
}

func (r *reader) fail(msg string) {
	if r.err == "" {
		r.err = msg
	}
}

func (r *reader) byte() byte {
	if r.err != "" {
		return 0
	}
	if r.pos >= len(r.b) {
		r.fail("truncated")
		return 0
	}
	r.pos++
	return r.b[r.pos-1]
}

func (r *reader) uvarint() uint64 {
	var x uint64
	for i := 0; i < 10; i++ {
		b := r.byte()
		if r.err != "" {
			return 0
		}
		if b < 0x80 {
			if i == 9 && b > 1 {
				r.fail("varint overflows 64 bits")
				return 0
			}
			return x | uint64(b)<<(7*i)
		}
		x |= uint64(b&0x7f) << (7 * i)
	}
	r.fail("varint longer than 10 bytes")
	return 0
}

func (r *reader) limit(what string, max uint64) int64 {
	v := r.uvarint()
	if v > max {
		r.fail(what + " is too large")
		return 0
	}
	return int64(v)
}

func (r *reader) str(what string) string {
	n := r.uvarint()
	if r.err != "" {
		return ""
	}
	if n > uint64(len(r.b)-r.pos) {
		r.fail(what + " runs past the end")
		return ""
	}
	s := string(r.b[r.pos : r.pos+int(n)])
	r.pos += int(n)
	if !utf8.ValidString(s) {
		r.fail(what + " is not valid UTF-8")
		return ""
	}
	return s
}
