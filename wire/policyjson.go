package wire

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
)

// A begin frame may carry its policy as JSON text (beginPolicyJSON), as
// the glue sends a policy: it is read with hostmsg.Policy, the reader
// every edge shares, so that no edge keeps a copy of the policy's rules.
// The decoder is handed the reader of that text (a PolicyReader), so that
// this package calls no JavaScript: ReadPolicyJSON parses it here,
// without encoding/json or strconv, whose tables would grow a module
// (the WASI module, a Go host's tests); the GOOS=js module hands it its
// syscall/js API's reader instead (JSON.parse, then hostmsg.Policy over
// the JavaScript value), as a second parser and a second instance of
// hostmsg.Policy would cost it about 11 KB of gzip, more than its size
// bar's margin. A policy is small: objects, arrays, strings, numbers,
// booleans and null, nested a few levels.

// PolicyReader reads the JSON text of a begin frame's policy.
type PolicyReader func(text string) (core.Policy, error)

// maxJSONDepth bounds the nesting of a policy's JSON text.
const maxJSONDepth = 32

// jsonValue is one parsed JSON value; the zero jsonValue is absent.
type jsonValue struct{ n *jsonNode }

type jsonNode struct {
	kind hostmsg.Kind
	text string // a string's text; "true" for true
	num  float64
	raw  string // the value's JSON text
	// elems are an array's elements, or an object's values.
	elems []jsonValue
	keys  []string
}

var _ hostmsg.Value[jsonValue] = jsonValue{}

func (v jsonValue) Kind() hostmsg.Kind {
	if v.n == nil {
		return hostmsg.Undefined
	}
	return v.n.kind
}

func (v jsonValue) Text() string {
	if v.n == nil {
		return ""
	}
	return v.n.text
}

func (v jsonValue) Len() int {
	if v.Kind() != hostmsg.Array {
		return 0
	}
	return len(v.n.elems)
}

func (v jsonValue) Index(i int) jsonValue {
	if v.Kind() != hostmsg.Array || i < 0 || i >= len(v.n.elems) {
		return jsonValue{}
	}
	return v.n.elems[i]
}

// Get returns the field's last value, as JSON.parse does.
func (v jsonValue) Get(key string) jsonValue {
	if v.Kind() != hostmsg.Object {
		return jsonValue{}
	}
	for i := len(v.n.keys) - 1; i >= 0; i-- {
		if v.n.keys[i] == key {
			return v.n.elems[i]
		}
	}
	return jsonValue{}
}

func (v jsonValue) JSON() (string, bool) {
	if v.n == nil {
		return "", false
	}
	return v.n.raw, true
}

// Keys lists a key as often as the text gives it.
func (v jsonValue) Keys() []string {
	if v.Kind() != hostmsg.Object {
		return nil
	}
	return v.n.keys
}

func (v jsonValue) Number() float64 {
	if v.n == nil {
		return 0
	}
	return v.n.num
}

func (v jsonValue) Bool() bool { return v.Kind() == hostmsg.Bool && v.n.text == "true" }

// ReadPolicyJSON is the PolicyReader of this package: it parses text
// here and reads it with hostmsg.Policy.
func ReadPolicyJSON(text string) (core.Policy, error) {
	p := jsonParser{s: text}
	v := p.value(0)
	if p.skip(); !p.bad && p.pos != len(p.s) {
		p.bad = true
	}
	if p.bad {
		return core.Policy{}, core.NewError(core.CodeInvalidArgument, "policy is not valid JSON")
	}
	return hostmsg.Policy(v)
}

type jsonParser struct {
	s   string
	pos int
	bad bool
}

func (p *jsonParser) skip() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == '\n' || p.s[p.pos] == '\r') {
		p.pos++
	}
}

// value parses one value; on a mistake it sets bad and returns the
// absent value.
func (p *jsonParser) value(depth int) jsonValue {
	p.skip()
	if p.bad || p.pos >= len(p.s) || depth > maxJSONDepth {
		p.bad = true
		return jsonValue{}
	}
	start := p.pos
	n := &jsonNode{}
	switch c := p.s[p.pos]; {
	case c == '{' || c == '[':
		n.kind = hostmsg.Array
		end := byte(']')
		if c == '{' {
			n.kind, end = hostmsg.Object, '}'
		}
		p.pos++
		for p.skip(); !p.bad && p.pos < len(p.s) && p.s[p.pos] != end; {
			if len(n.elems) > 0 {
				p.expect(',')
			}
			if c == '{' {
				p.skip()
				k := p.value(depth + 1)
				if k.Kind() != hostmsg.String {
					p.bad = true
				}
				n.keys = append(n.keys, k.Text())
				p.skip()
				p.expect(':')
			}
			n.elems = append(n.elems, p.value(depth+1))
			p.skip()
		}
		p.expect(end)
	case c == '"':
		n.kind = hostmsg.String
		n.text = p.str()
	case c == 't' || c == 'f' || c == 'n':
		for _, w := range [...]string{"true", "false", "null"} {
			if len(p.s)-p.pos >= len(w) && p.s[p.pos:p.pos+len(w)] == w {
				n.kind, n.text = hostmsg.Bool, w
				p.pos += len(w)
				break
			}
		}
		if n.text == "null" {
			n.kind = hostmsg.Null
		}
		if n.text == "" {
			p.bad = true
		}
	default:
		n.kind = hostmsg.Number
		n.num = p.number()
	}
	if p.bad {
		return jsonValue{}
	}
	n.raw = p.s[start:p.pos]
	return jsonValue{n}
}

func (p *jsonParser) expect(c byte) {
	if p.bad || p.pos >= len(p.s) || p.s[p.pos] != c {
		p.bad = true
		return
	}
	p.pos++
}

// str parses a string at p.pos, with its escapes.
func (p *jsonParser) str() string {
	p.pos++
	var b []byte
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			if !utf8.Valid(b) {
				p.bad = true
			}
			return string(b)
		case c < 0x20:
			p.bad = true
			return ""
		case c != '\\':
			b = append(b, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.s) {
			break
		}
		e := p.s[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := p.hex4()
			if utf16.IsSurrogate(r) && p.pos+1 < len(p.s) && p.s[p.pos] == '\\' && p.s[p.pos+1] == 'u' {
				save := p.pos
				p.pos += 2
				if r2 := utf16.DecodeRune(r, p.hex4()); r2 != utf8.RuneError {
					r = r2
				} else {
					p.pos = save
				}
			}
			b = utf8.AppendRune(b, r) // a lone surrogate is U+FFFD, as TextEncoder writes it
		default:
			p.bad = true
			return ""
		}
	}
	p.bad = true
	return ""
}

func (p *jsonParser) hex4() rune {
	if len(p.s)-p.pos < 4 {
		p.bad = true
		return 0
	}
	var r rune
	for _, c := range []byte(p.s[p.pos : p.pos+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			p.bad = true
			return 0
		}
		r = r<<4 | rune(c)
	}
	p.pos += 4
	return r
}

// number parses a JSON number at p.pos. The reader needs to know only
// whether it is an integer and, when it is one a JavaScript number holds
// exactly, which: a fraction is returned as 0.5, an integer of more than
// 16 digits as ±1e300 (over every bound of core.Policy.Validate).
func (p *jsonParser) number() float64 {
	neg := p.pos < len(p.s) && p.s[p.pos] == '-'
	if neg {
		p.pos++
	}
	// value = digits × 10^exp, digits without leading zeros.
	var digits []byte
	exp := 0
	intStart := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		if len(digits) > 0 || p.s[p.pos] != '0' {
			digits = append(digits, p.s[p.pos])
		}
		p.pos++
	}
	if n := p.pos - intStart; n == 0 || (n > 1 && p.s[intStart] == '0') {
		p.bad = true
		return 0
	}
	if p.pos < len(p.s) && p.s[p.pos] == '.' {
		p.pos++
		fracStart := p.pos
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			if len(digits) > 0 || p.s[p.pos] != '0' {
				digits = append(digits, p.s[p.pos])
			}
			exp--
			p.pos++
		}
		if p.pos == fracStart {
			p.bad = true
			return 0
		}
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'e' || p.s[p.pos] == 'E') {
		p.pos++
		eneg := false
		if p.pos < len(p.s) && (p.s[p.pos] == '+' || p.s[p.pos] == '-') {
			eneg = p.s[p.pos] == '-'
			p.pos++
		}
		e, start := 0, p.pos
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			if e < 1e6 {
				e = e*10 + int(p.s[p.pos]-'0')
			}
			p.pos++
		}
		if p.pos == start {
			p.bad = true
			return 0
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	var f float64
	switch {
	case len(digits) == 0:
		return 0
	case exp < 0:
		f = 0.5
	case len(digits)+exp > 16:
		f = 1e300
	default:
		var n int64
		for _, d := range digits {
			n = n*10 + int64(d-'0')
		}
		for ; exp > 0; exp-- {
			n *= 10
		}
		f = float64(n)
	}
	if neg {
		f = -f
	}
	return f
}
