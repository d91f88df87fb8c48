package wire

import "github.com/agentrt/agentrt/core"

// ConfigMagic opens a config frame: "ARC", then ConfigVersion.
const ConfigMagic = "ARC"

// ConfigVersion is the config frame version this package reads and
// writes.
const ConfigVersion = 1

// Model bytes of a config frame.
const (
	configModelHost = 0 // the host answers model calls
	configModelEcho = 1 // the module's built-in echo model answers them
)

// Config is what a config frame carries: what a WASI host passes to
// agentrt_create (docs/wasi.md, "Config frame"). The zero Config is a
// runtime whose host answers model calls, with no system prompt, no
// tools and the default limits.
//
//	f := wire.AppendConfig(nil, &wire.Config{SystemPrompt: "Be brief."})
//	cfg, err := wire.DecodeConfig(f) // in the module
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

const maxInt53 = 1 << 53

// AppendConfig appends a config frame for c. Negative limits are written
// as 0 (the default); core.Limits.Validate is the place to refuse them.
func AppendConfig(dst []byte, c *Config) []byte {
	dst = append(dst, ConfigMagic...)
	dst = append(dst, ConfigVersion)
	dst = AppendString(dst, c.SystemPrompt)
	if c.Echo {
		dst = append(dst, configModelEcho)
	} else {
		dst = append(dst, configModelHost)
	}
	dst = AppendUvarint(dst, uint64(len(c.Tools)))
	for i := range c.Tools {
		t := &c.Tools[i]
		dst = AppendString(dst, t.Name)
		dst = AppendString(dst, t.Description)
		dst = AppendString(dst, t.Parameters)
	}
	l := &c.Limits
	for _, v := range [...]int64{int64(l.MaxSessions), int64(l.MaxMessagesPerSession), l.MaxSessionBytes,
		int64(l.MaxSeedMessages), l.MaxSeedBytes, l.MaxMessageBytes} {
		dst = AppendUvarint(dst, uint64(max(v, 0)))
	}
	return dst
}

// DecodeConfig decodes a config frame. It checks the whole frame and
// returns a *core.Error with code invalid_argument for anything
// malformed. Tools with no name or a duplicate name are left for
// core.New to refuse.
func DecodeConfig(b []byte) (*Config, error) {
	r := &reader{s: string(b), index: core.NoIndex, code: core.CodeInvalidArgument, prefix: "config frame: "}
	if len(b) < len(ConfigMagic)+1 || r.s[:len(ConfigMagic)] != ConfigMagic {
		r.fail("not a config frame (bad magic)")
		return nil, r.err
	}
	if b[len(ConfigMagic)] != ConfigVersion {
		r.fail("unknown config frame version")
		return nil, r.err
	}
	r.pos = len(ConfigMagic) + 1
	var c Config
	c.SystemPrompt = r.str("systemPrompt")
	switch r.byte() {
	case configModelHost:
	case configModelEcho:
		c.Echo = true
	default:
		r.fail("unknown model byte")
	}
	if n := r.count("tool count", 3); r.err == nil && n > 0 {
		c.Tools = make([]core.ToolSpec, n)
		for i := range c.Tools {
			t := &c.Tools[i]
			t.Name = r.str("tool name")
			t.Description = r.str("tool description")
			t.Parameters = r.str("tool parameters")
		}
	}
	l := &c.Limits
	l.MaxSessions = r.int("maxSessions", maxInt32)
	l.MaxMessagesPerSession = r.int("maxMessagesPerSession", maxInt32)
	l.MaxSessionBytes = int64(r.int("maxSessionBytes", maxInt53))
	l.MaxSeedMessages = r.int("maxSeedMessages", maxInt32)
	l.MaxSeedBytes = int64(r.int("maxSeedBytes", maxInt53))
	l.MaxMessageBytes = int64(r.int("maxMessageBytes", maxInt53))
	if err := r.end(); err != nil {
		return nil, err
	}
	return &c, nil
}
