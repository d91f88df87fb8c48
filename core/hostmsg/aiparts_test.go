package hostmsg_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// aiTypesDir is where npm ci puts the pinned AI SDK's type definitions
// (package.json's devDependencies pin "ai").
var aiTypesDir = filepath.Join("..", "..", "node_modules", "ai", "dist")

var (
	// uiMessagePartUnion matches the declaration of UIMessagePart, the
	// union of every part type a UIMessage may hold.
	uiMessagePartUnion = regexp.MustCompile(`(?m)^type UIMessagePart<[^=]*>\s*=\s*([^;]+);`)
	// partTypeField matches a part's discriminant: type: 'x' or a
	// template literal such as type: ` + "`tool-${NAME}`" + `.
	partTypeField = regexp.MustCompile("type:\\s*(?:'([^']+)'|\"([^\"]+)\"|`([^`]+)`)")
)

// declaredPartTypes reads the part types the pinned ai declares in its
// .d.ts files: each member of UIMessagePart, followed to its own
// declaration, and that declaration's first type field. A template
// literal such as `tool-${NAME}` is returned with "x" for its
// placeholder ("tool-x").
func declaredPartTypes(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(aiTypesDir, "*.d.ts"))
	if len(files) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("no type definitions of ai in %s: run npm ci", aiTypesDir)
		}
		t.Skipf("ai is not installed in %s: run npm ci", aiTypesDir)
	}
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		all.WriteByte('\n')
	}
	src := all.String()
	m := uiMessagePartUnion.FindStringSubmatch(src)
	if m == nil {
		t.Fatal("no UIMessagePart union in ai's type definitions: the test must learn its new form")
	}
	var types []string
	for _, member := range strings.Split(m[1], "|") {
		name := strings.TrimSpace(member)
		if i := strings.IndexByte(name, '<'); i >= 0 {
			name = name[:i]
		}
		decl := regexp.MustCompile(`(?m)^type ` + regexp.QuoteMeta(name) + `\b[^=]*=`).FindStringIndex(src)
		if decl == nil {
			t.Fatalf("UIMessagePart member %s has no declaration", name)
		}
		f := partTypeField.FindStringSubmatch(src[decl[1]:])
		if f == nil {
			t.Fatalf("UIMessagePart member %s has no type field", name)
		}
		lit := f[1] + f[2] + f[3]
		lit = regexp.MustCompile(`\$\{[^}]*\}`).ReplaceAllString(lit, "x")
		types = append(types, lit)
	}
	return types
}

// TestEveryPartTypeOfThePinnedAI fails when a part type that the pinned
// ai declares is refused as unknown by the reader every edge uses: each
// is read on an assistant UIMessage (where every part type may appear)
// and must be read or skipped (docs/contract.md).
func TestEveryPartTypeOfThePinnedAI(t *testing.T) {
	types := declaredPartTypes(t)
	for _, want := range []string{"text", "tool-x", "dynamic-tool", "custom", "reasoning-file", "steering-message", "data-x"} {
		found := false
		for _, ty := range types {
			found = found || ty == want
		}
		if !found {
			t.Errorf("the part types read from ai's definitions lack %q: %v", want, types)
		}
	}
	for _, ty := range types {
		part := `{"type": "` + ty + `", "text": "t", "toolName": "x", "toolCallId": "c1", "state": "output-available", "input": {}, "output": "o", ` +
			`"kind": "acme.x", "mediaType": "image/png", "url": "https://example.com/a.png", "id": "p1", "parts": [], "sourceId": "s1", "title": "t", "data": 1}`
		v, err := hostjson.Parse([]byte(`[{"id": "m1", "role": "assistant", "parts": [` + part + `]}]`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := hostmsg.Messages(v, 0); err != nil {
			t.Errorf("part type %q of the pinned ai is refused: %v", ty, err)
		}
	}
}
