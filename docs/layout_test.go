package docs_test

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// readmeSection returns the section of README.md under heading (a "## "
// line), up to the next such heading.
func readmeSection(t *testing.T, root, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no %q section", heading)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	return sec
}

// Ensure README's layout table names every directory of the repository
// that holds Go files (testdata aside): a new package is listed there or
// this test fails.
func TestReadme_LayoutListsEveryPackage(t *testing.T) {
	root := repoRoot(t)
	layout := readmeSection(t, root, "## Layout")
	dirs := map[string]bool{}
	walk(t, root, func(rel string, _ []byte) {
		if !strings.HasSuffix(rel, ".go") {
			return
		}
		dir := path.Dir(rel)
		if dir == "." || dir == "testdata" || strings.HasPrefix(dir, "testdata/") || strings.Contains(dir, "/testdata") {
			return
		}
		dirs[dir] = true
	})
	if len(dirs) < 20 {
		t.Fatalf("found only %d directories with Go files: %v", len(dirs), dirs)
	}
	var missing []string
	for dir := range dirs {
		if !strings.Contains(layout, "`"+dir+"/`") {
			missing = append(missing, dir)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("README.md's layout table does not list %q: add a row (or the path to a row) saying what each is", missing)
	}
}
