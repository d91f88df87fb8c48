// Package docs_test checks the repository's documentation as a whole:
// every relative Markdown link points at a file of the repository, and no
// file names a document that lives outside it.
package docs_test

import (
	"bytes"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// skipDirs are never read: installed packages, build output, git's own.
var skipDirs = map[string]bool{"node_modules": true, "dist": true, ".git": true, "artifacts": true}

// repoRoot is the directory holding go.mod, one up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod in %s: %v", root, err)
	}
	return root
}

// walk calls f with the slash path (relative to root) and contents of
// every regular file outside skipDirs.
func walk(t *testing.T, root string, f func(rel string, b []byte)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		f(filepath.ToSlash(rel), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var (
	// inlineLink matches [text](target) and ![alt](target), with an
	// optional "title" after the target.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refLink matches a reference definition: [label]: target.
	refLink = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	// codeSpan matches inline code, whose brackets are not links.
	codeSpan = regexp.MustCompile("`[^`\n]*`")
	// scheme matches a URL scheme (https:, mailto:, ...).
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// links returns the link targets of a Markdown text, outside fenced code
// blocks and code spans.
func links(md []byte) []string {
	var out []string
	var text strings.Builder
	fenced := false
	for _, line := range strings.Split(string(md), "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if !fenced {
			text.WriteString(codeSpan.ReplaceAllString(line, "``"))
			text.WriteByte('\n')
		}
	}
	for _, re := range []*regexp.Regexp{inlineLink, refLink} {
		for _, m := range re.FindAllStringSubmatch(text.String(), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// resolve returns the slash path, relative to the repository root, that
// target names from the Markdown file rel, and false when target is not
// a relative link (a URL with a scheme, or an anchor in the same file).
// A path that leaves the repository starts with "..".
func resolve(rel, target string) (string, bool) {
	if scheme.MatchString(target) || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "//") {
		return "", false
	}
	if i := strings.IndexAny(target, "#?"); i >= 0 {
		target = target[:i]
	}
	if u, err := url.PathUnescape(target); err == nil {
		target = u
	}
	if strings.HasPrefix(target, "/") {
		return path.Clean(strings.TrimPrefix(target, "/")), true
	}
	return path.Clean(path.Join(path.Dir(rel), target)), true
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name, from, target, want string
		ok                       bool
	}{
		{"Sibling", "docs/glue.md", "module.md", "docs/module.md", true},
		{"Up", "docs/adr/0007-js-boundary.md", "../wire.md#exports", "docs/wire.md", true},
		{"Escaped", "README.md", "docs/a%20b.md", "docs/a b.md", true},
		{"RootRelative", "docs/glue.md", "/README.md", "README.md", true},
		{"Outside", "docs/glue.md", "../../x/notes.md", "../x/notes.md", true},
		{"Anchor", "docs/glue.md", "#fast-path", "", false},
		{"URL", "README.md", "https://go.dev/", "", false},
		{"Mail", "README.md", "mailto:a@b.c", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Ensure each kind of target resolves as a reader's browser would.
			got, ok := resolve(tc.from, tc.target)
			if got != tc.want || ok != tc.ok {
				t.Errorf("resolve(%q, %q) = %q, %v; want %q, %v", tc.from, tc.target, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestLinks(t *testing.T) {
	md := []byte("See [a](a.md), ![img](img/x.png \"title\") and [b][ref].\n" +
		"`[not](code.md)`\n```\n[not](fenced.md)\n```\n[ref]: <b.md>\n")
	got := strings.Join(links(md), " ")
	// Ensure links are found inline and in reference definitions, and
	// not in code.
	if want := "a.md img/x.png b.md"; got != want {
		t.Errorf("links = %q, want %q", got, want)
	}
}

func TestMarkdown_RelativeLinksResolve(t *testing.T) {
	root := repoRoot(t)
	files, checked := 0, 0
	walk(t, root, func(rel string, b []byte) {
		if !strings.HasSuffix(rel, ".md") {
			return
		}
		files++
		for _, target := range links(b) {
			p, ok := resolve(rel, target)
			if !ok {
				continue
			}
			checked++
			// Ensure the link stays inside the repository and names a file
			// or directory that exists.
			if p == ".." || strings.HasPrefix(p, "../") {
				t.Errorf("%s: link %q leaves the repository", rel, target)
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
				t.Errorf("%s: link %q: no such file %s", rel, target, p)
			}
		}
	})
	if files == 0 || checked == 0 {
		t.Fatalf("read %d Markdown files and %d relative links: the walk found nothing", files, checked)
	}
	t.Logf("%d Markdown files, %d relative links", files, checked)
}

func TestFiles_NameNoOutsideDocument(t *testing.T) {
	// A document that is not in the repository cannot be followed by its
	// readers: no file may send them to it. The name is built here so
	// that this file does not name it either.
	name := []byte(strings.ToUpper("design") + ".md")
	walk(t, repoRoot(t), func(rel string, b []byte) {
		if bytes.IndexByte(b, 0) >= 0 {
			return // binary
		}
		// Ensure no text file names the outside document.
		if bytes.Contains(b, name) {
			t.Errorf("%s names %s, which is not in the repository", rel, name)
		}
	})
}
