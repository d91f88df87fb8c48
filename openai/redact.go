package openai

import (
	"encoding/base64"
	"strings"
)

// Redacted replaces a secret in text that Redact cleans.
const Redacted = "[redacted]"

// minSecret is the shortest secret Redact looks for: shorter ones would
// redact ordinary words.
const minSecret = 4

// Redact returns s with every occurrence of secret replaced by Redacted,
// in each encoding an upstream or a network library may quote it in:
//
//   - as it is;
//   - JSON-escaped, any character of it as \uXXXX (once or inside
//     another escaped string, with more backslashes) or as \/, \", \\;
//   - URL-encoded, any character as %XX (upper or lower case, or %25XX
//     when encoded twice), a space as +; the escapes may be mixed;
//   - base64 (standard or URL alphabet, any padding) of any text that
//     contains it, such as "Bearer <secret>" or "user:<secret>".
//
// A secret shorter than 4 bytes is not looked for. Call Redact before
// cutting text short, so that a secret is never split by the cut. The
// JavaScript model (js/openai.js, redactor) applies the same rules: keep
// the two in step.
func Redact(s, secret string) string {
	if len(secret) < minSecret || len(s) == 0 {
		return s
	}
	s = redactEscaped(s, secret)
	for _, core := range base64Cores(secret) {
		s = strings.ReplaceAll(s, core, Redacted)
	}
	return s
}

// redactEscaped replaces the secret, raw or escaped character by
// character, scanning s once per position.
func redactEscaped(s, secret string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		end := matchEscaped(s, i, secret)
		if end < 0 {
			i++
			continue
		}
		if b.Len() == 0 && last == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:i])
		b.WriteString(Redacted)
		i, last = end, end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// matchEscaped returns the end of the secret's occurrence starting at i,
// or -1.
func matchEscaped(s string, i int, secret string) int {
	p := i
	for j := 0; j < len(secret); j++ {
		n := matchByte(s, p, secret[j])
		if n == 0 {
			return -1
		}
		p += n
	}
	return p
}

// matchByte returns how many bytes of s at p spell c, or 0.
func matchByte(s string, p int, c byte) int {
	if p >= len(s) {
		return 0
	}
	switch s[p] {
	case c:
		return 1
	case '\\':
		q := p
		for q < len(s) && s[q] == '\\' {
			q++
		}
		if q < len(s) && s[q] == c && (c == '/' || c == '"') {
			return q + 1 - p
		}
		if q+5 <= len(s) && (s[q] == 'u' || s[q] == 'U') && s[q+1] == '0' && s[q+2] == '0' && hexByte(s[q+3], s[q+4]) == int(c) {
			return q + 5 - p
		}
		if c == '\\' && q-p >= 2 {
			return q - p
		}
	case '%':
		if p+3 <= len(s) && hexByte(s[p+1], s[p+2]) == int(c) {
			return 3
		}
		if p+5 <= len(s) && s[p+1] == '2' && s[p+2] == '5' && hexByte(s[p+3], s[p+4]) == int(c) {
			return 5
		}
	case '+':
		if c == ' ' {
			return 1
		}
	}
	return 0
}

// hexByte returns the byte two hex digits spell, or -1.
func hexByte(h, l byte) int {
	a, b := unhex(h), unhex(l)
	if a < 0 || b < 0 {
		return -1
	}
	return a<<4 | b
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// base64Cores returns, for each of the three alignments the secret can
// have inside a longer encoded text and for both alphabets, the run of
// base64 characters that depends on the secret's bytes alone: it appears
// in the encoding of every text that contains the secret at that
// alignment, whatever surrounds it. Runs shorter than 8 characters are
// left out (they would match ordinary text).
func base64Cores(secret string) []string {
	var cores []string
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for a := 0; a < 3; a++ {
			e := enc.EncodeToString([]byte(strings.Repeat("\x00", a) + secret))
			from := (8*a + 5) / 6           // the first character without pad bits
			to := 8 * (a + len(secret)) / 6 // the characters wholly inside the secret
			if to-from >= 8 {
				cores = append(cores, e[from:to])
			}
		}
	}
	return cores
}
