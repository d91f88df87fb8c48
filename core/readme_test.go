package core_test

import (
	"os"
	"strings"
	"testing"
)

// Ensure every line of the README's Go snippet is a line of Example, so
// that the snippet is code the tests compile and run.
func TestReadme_GoSnippet(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Using it from Go")
	if !ok {
		t.Fatal(`README.md has no "## Using it from Go" section`)
	}
	_, code, ok := strings.Cut(after, "```go\n")
	if ok {
		code, _, ok = strings.Cut(code, "```")
	}
	if !ok {
		t.Fatal("the Go section has no ```go block")
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(example), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	n := 0
	for _, l := range strings.Split(code, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
		case strings.HasPrefix(l, "import "):
			if l != `import "github.com/agentrt/agentrt/core"` {
				t.Errorf("the snippet imports %s, want the module path", l)
			}
		case !lines[l]:
			t.Errorf("README line %q is not in Example", l)
		default:
			n++
		}
	}
	if n < 5 {
		t.Errorf("only %d snippet lines checked", n)
	}
}
