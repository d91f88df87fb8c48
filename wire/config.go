package wire

import "github.com/agentrt/agentrt/core"

// ConfigMagic opens a config frame: "ARC", then ConfigVersion.
const ConfigMagic = "ARC"

// ConfigVersion is the config frame version this package writes when no
// tool needs approval (else ConfigVersionApprovals). It reads these
// versions and ConfigVersion1.
const ConfigVersion = 2

// ConfigVersion1 is the first config frame version, which carried six
// limits and no count of them (no maxTotalBytes): a version 1 frame
// decodes with MaxTotalBytes 0, the default.
const ConfigVersion1 = 1

// ConfigVersionJSON is the config frame version whose config is JSON
// text: "ARC", 3, then the text as UTF-8 to the frame's end (docs/wire.md,
// "Config frame"). The GOOS=js module reads this version only, with the
// reader of its createRuntime's config (JSON.parse, then that reader);
// the WASI module reads ConfigVersion, ConfigVersion1 and
// ConfigVersionApprovals, with DecodeConfig.
const ConfigVersionJSON = 3

// AppendConfigJSON appends a config frame of version ConfigVersionJSON
// carrying text, a config as JSON text.
func AppendConfigJSON(dst []byte, text string) []byte {
	return append(append(append(dst, ConfigMagic...), ConfigVersionJSON), text...)
}

// ConfigJSON returns the JSON text a config frame of version
// ConfigVersionJSON carries; any other frame is refused with
// invalid_argument.
func ConfigJSON(b []byte) (string, error) {
	if len(b) < len(ConfigMagic)+1 || string(b[:len(ConfigMagic)]) != ConfigMagic || b[len(ConfigMagic)] != ConfigVersionJSON {
		return "", core.NewError(core.CodeInvalidArgument, "config frame: this module reads a config frame of version 3 (JSON text) only")
	}
	return string(b[len(ConfigMagic)+1:]), nil
}

// configLimits names the limits of core.Limits in the order a config
// frame carries them, with the largest value each may have. A limit added
// to core.Limits is added at the end (wire's tests check that every
// field crosses the frame).
var configLimits = [...]struct {
	name string
	max  uint64
}{
	{"maxSessions", maxInt32},
	{"maxMessagesPerSession", maxInt32},
	{"maxSessionBytes", maxInt53},
	{"maxSeedMessages", maxInt32},
	{"maxSeedBytes", maxInt53},
	{"maxMessageBytes", maxInt53},
	{"maxTotalBytes", maxInt53},
}

// limitValues returns l's limits in the order of configLimits.
func limitValues(l *core.Limits) [len(configLimits)]int64 {
	return [...]int64{int64(l.MaxSessions), int64(l.MaxMessagesPerSession), l.MaxSessionBytes,
		int64(l.MaxSeedMessages), l.MaxSeedBytes, l.MaxMessageBytes, l.MaxTotalBytes}
}

// setLimits sets l's limits from v, in the order of configLimits.
func setLimits(l *core.Limits, v *[len(configLimits)]int64) {
	l.MaxSessions, l.MaxMessagesPerSession, l.MaxSessionBytes = int(v[0]), int(v[1]), v[2]
	l.MaxSeedMessages, l.MaxSeedBytes, l.MaxMessageBytes = int(v[3]), v[4], v[5]
	l.MaxTotalBytes = v[6]
}

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
	// CountByAction says the host counts tokens (core.Config.
	// CountByAction): bit 1 of the model byte. A module that does not
	// know the bit refuses the frame.
	CountByAction bool
	// Approval is each tool's approval mode, in the order of Tools;
	// missing entries are ApprovalNever.
	Approval []ApprovalMode
}

const maxInt53 = 1 << 53

// AppendConfig appends a config frame (version ConfigVersion) for c.
// Negative limits are written as 0 (the default); core.Limits.Validate is
// the place to refuse them. The frame carries the limits up to the last
// one that is not 0, so that a module that knows fewer limits reads a
// frame that sets none of the limits it does not know.
func AppendConfig(dst []byte, c *Config) []byte {
	dst = append(dst, ConfigMagic...)
	version := byte(ConfigVersion)
	for _, m := range c.Approval {
		if m != ApprovalNever {
			version = ConfigVersionApprovals
		}
	}
	dst = append(dst, version)
	dst = AppendString(dst, c.SystemPrompt)
	model := byte(configModelHost)
	if c.Echo {
		model = configModelEcho
	}
	if c.CountByAction {
		model |= configCountByAction
	}
	dst = append(dst, model)
	dst = AppendUvarint(dst, uint64(len(c.Tools)))
	for i := range c.Tools {
		t := &c.Tools[i]
		dst = AppendString(dst, t.Name)
		dst = AppendString(dst, t.Description)
		dst = AppendString(dst, t.Parameters)
		if version == ConfigVersionApprovals {
			m := ApprovalNever
			if i < len(c.Approval) {
				m = c.Approval[i]
			}
			dst = append(dst, byte(m))
		}
	}
	v := limitValues(&c.Limits)
	k := len(v)
	for k > 0 && v[k-1] <= 0 {
		k--
	}
	dst = AppendUvarint(dst, uint64(k))
	for _, x := range v[:k] {
		dst = AppendUvarint(dst, uint64(max(x, 0)))
	}
	return dst
}

// DecodeConfig decodes a config frame of version ConfigVersion,
// ConfigVersion1 or ConfigVersionApprovals (version 3,
// ConfigVersionJSON, is the GOOS=js module's: see ConfigJSON). It checks
// the whole frame and returns a *core.Error with code invalid_argument for anything malformed, for an unknown
// version, and for a frame that carries more limits than this package
// knows (a newer host's limit is refused, never dropped). Limits the
// frame does not carry are 0, the default. Tools with no name or a
// duplicate name are left for core.New to refuse.
func DecodeConfig(b []byte) (*Config, error) {
	r := &reader{s: string(b), index: core.NoIndex, code: core.CodeInvalidArgument, prefix: "config frame: "}
	if len(b) < len(ConfigMagic)+1 || r.s[:len(ConfigMagic)] != ConfigMagic {
		r.fail("not a config frame (bad magic)")
		return nil, r.err
	}
	version := b[len(ConfigMagic)]
	if version != ConfigVersion && version != ConfigVersion1 && version != ConfigVersionApprovals {
		r.fail("unknown config frame version " + itoa(int(version)) + " (this module reads versions 1, 2 and 4)")
		return nil, r.err
	}
	r.pos = len(ConfigMagic) + 1
	var c Config
	c.SystemPrompt = r.str("systemPrompt")
	model := r.byte()
	c.CountByAction = model&configCountByAction != 0
	switch model &^ configCountByAction {
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
			if version == ConfigVersionApprovals {
				if c.Approval == nil {
					c.Approval = make([]ApprovalMode, n)
				}
				if c.Approval[i] = ApprovalMode(r.byte()); c.Approval[i] > ApprovalAsk {
					r.fail("unknown approval mode " + itoa(int(c.Approval[i])))
				}
			}
		}
	}
	k := uint64(6) // version 1: six limits, no count
	if version != ConfigVersion1 && r.err == nil {
		if k = r.uvarint(); r.err == nil && k > uint64(len(configLimits)) {
			r.fail("the frame carries " + itoa(int(min(k, 1<<31))) + " limits; this module knows " +
				itoa(len(configLimits)) + ": a newer host sets a limit this module cannot enforce")
		}
	}
	var v [len(configLimits)]int64
	for i := 0; r.err == nil && uint64(i) < k; i++ {
		v[i] = int64(r.int(configLimits[i].name, configLimits[i].max))
	}
	setLimits(&c.Limits, &v)
	if err := r.end(); err != nil {
		return nil, err
	}
	return &c, nil
}
