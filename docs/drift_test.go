package docs_test

// Figures and names the docs state, held to the code they describe: a
// change to the code that leaves a doc behind fails here.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
	"github.com/agentrt/agentrt/mock"
	"github.com/agentrt/agentrt/wasm/worker/durable"
	"github.com/agentrt/agentrt/wire"
)

// readDoc returns the file rel (a slash path under root).
func readDoc(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section returns the part of md under heading (a whole heading line,
// "## Errors"), up to the next heading of the same level or higher.
func section(t *testing.T, md, heading string) string {
	t.Helper()
	level := strings.IndexByte(heading, ' ')
	_, rest, ok := strings.Cut(md, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("no section %q", heading)
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(rest, "\n") {
		if n := len(line) - len(strings.TrimLeft(line, "#")); n > 0 && n <= level && strings.HasPrefix(line[n:], " ") {
			break
		}
		out.WriteString(line)
	}
	return out.String()
}

// glueSources are the glue's source files: js/*.js.
func glueSources(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "js", "*.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no js/*.js: %v", err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	sort.Strings(files)
	return files
}

// Ensure glue.md's "each file ... under N lines" holds for every file of
// js/, and its table of files names each of them, and no other.
func TestGlueMD_Files(t *testing.T) {
	root := repoRoot(t)
	md := readDoc(t, root, "docs/glue.md")
	m := regexp.MustCompile(`each file a plain ES\s+module under (\d+) lines`).FindStringSubmatch(md)
	if m == nil {
		t.Fatal("docs/glue.md no longer says how long a file of the glue is: keep this test in step with it")
	}
	limit, _ := strconv.Atoi(m[1])
	sources := glueSources(t, root)
	longest, longestFile := 0, ""
	for _, f := range sources {
		n := bytes.Count([]byte(readDoc(t, root, "js/"+f)), []byte("\n"))
		if n > longest {
			longest, longestFile = n, f
		}
		if n >= limit {
			t.Errorf("js/%s has %d lines; docs/glue.md says each file is under %d", f, n, limit)
		}
	}
	t.Logf("%d files, the longest js/%s with %d lines (the docs' bound: %d)", len(sources), longestFile, longest, limit)

	files := section(t, md, "## Files")
	named := map[string]bool{}
	for _, row := range regexp.MustCompile("(?m)^\\| ([^|]+) \\|").FindAllStringSubmatch(files, -1) {
		for _, c := range regexp.MustCompile("`([\\w.-]+\\.js)`").FindAllStringSubmatch(row[1], -1) {
			named[c[1]] = true
		}
	}
	for _, f := range sources {
		if !named[f] {
			t.Errorf("docs/glue.md's table of files does not name js/%s", f)
		}
		delete(named, f)
	}
	for f := range named {
		t.Errorf("docs/glue.md's table of files names %s, which js/ does not hold", f)
	}
}

// repoPath matches a path of the repository as the docs write one: a
// top-level directory, then at least one more element.
var repoPath = regexp.MustCompile("(?:^|[\\s`(\"'])((?:bench|cmd|core|docs|httpapi|internal|js|jshost|mock|openai|scripts|testdata|wasihost|wasm|wazero_test|web-demo|wire)/[\\w./*-]*[\\w*])")

// goIdent is a Go name qualifying a package path: core/hostmsg.Messages.
var goIdent = regexp.MustCompile(`\.[A-Z]\w*(\.\w+)*$`)

// namedFiles returns the repository paths text names that do not exist
// under root. A path with a glob is skipped; a package path qualified by
// a Go name (internal/build.Module) names its package; an ADR named by
// its number (docs/adr/0002) names the ADR of that number.
func namedFiles(root, text string) (missing []string, checked int) {
	for _, m := range repoPath.FindAllStringSubmatch(text, -1) {
		p := strings.TrimSuffix(m[1], ".")
		if strings.ContainsAny(p, "*") {
			continue
		}
		checked++
		if exists(root, p) {
			continue
		}
		if q := goIdent.ReplaceAllString(p, ""); q != p && exists(root, q) {
			continue
		}
		if adr, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(p)+"-*.md")); strings.HasPrefix(p, "docs/adr/") && len(adr) == 1 {
			continue
		}
		missing = append(missing, p)
	}
	return missing, checked
}

func exists(root, p string) bool {
	_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
	return err == nil
}

func TestNamedFiles(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"js/test", "docs/adr", "internal/build"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"js/glue.d.ts", "docs/adr/0002-no-time.md"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text := "See js/glue.d.ts, `js/test/*.test.mjs`, internal/build.Module, docs/adr/0002, (js/test/types.test.mjs) and docs/adr/0003."
	missing, checked := namedFiles(root, text)
	// Ensure a name that exists passes, in each form, and one that does
	// not is reported.
	if strings.Join(missing, " ") != "js/test/types.test.mjs docs/adr/0003" || checked != 5 {
		t.Errorf("namedFiles = %q, %d checked", missing, checked)
	}
}

// Ensure every file of the repository that the docs of the contract as
// built (README, RATIONALE, docs/ but the ADRs and BENCHMARKS.md, which
// record their time), the package's types and the Makefile name exists.
func TestDocs_NamedFilesExist(t *testing.T) {
	root := repoRoot(t)
	docs := []string{"README.md", "RATIONALE.md", "Makefile", "scripts/test.sh"}
	for _, pattern := range []string{"docs/*.md", "js/*.d.ts"} {
		files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		for _, f := range files {
			rel, _ := filepath.Rel(root, f)
			if rel = filepath.ToSlash(rel); rel != "docs/BENCHMARKS.md" {
				docs = append(docs, rel)
			}
		}
	}
	total := 0
	for _, d := range docs {
		missing, checked := namedFiles(root, readDoc(t, root, d))
		total += checked
		for _, p := range missing {
			t.Errorf("%s names %s, which the repository does not hold", d, p)
		}
	}
	if total == 0 {
		t.Fatal("no file named in the docs: the scan found nothing")
	}
	t.Logf("%d documents, %d names of files", len(docs), total)
}

// noStore is an empty conversation's storage.
type noStore struct{}

func (noStore) Stat() (int, int64, error)                    { return 0, 0, nil }
func (noStore) Load() ([]byte, error)                        { return []byte("[]"), nil }
func (noStore) Write(from int, msgs [][]byte) (int64, error) { return int64(len(msgs)), nil }
func (noStore) Clear() error                                 { return nil }

// Ensure contract.md's table of errors lists every code the code
// defines (core's, the HTTP API's, the durable deployment's run_lost,
// and the glue's own), and the HTTP status each answers with.
func TestContract_ErrorTable(t *testing.T) {
	root := repoRoot(t)
	table := section(t, readDoc(t, root, "docs/contract.md"), "## Errors")
	stated := map[string]string{} // code -> its HTTP column
	for _, row := range regexp.MustCompile("(?m)^\\| (`[a-z_]+`(?:, `[a-z_]+`)*) \\|.*\\| *([0-9, ]*) *\\|$").FindAllStringSubmatch(table, -1) {
		codes := regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(row[1], -1)
		statuses := strings.Split(row[2], ",")
		for i, c := range codes {
			s := ""
			if len(statuses) == len(codes) {
				s = strings.TrimSpace(statuses[i])
			}
			stated[c[1]] = s
		}
	}
	if len(stated) == 0 {
		t.Fatal("docs/contract.md's table of errors was not found: keep this test in step with it")
	}

	// The codes an HTTP answer carries, and the status it has.
	api := []core.Code{
		core.CodeInvalidArgument, core.CodeInvalidHistory, core.CodeSessionBusy, core.CodeLimitExceeded,
		core.CodeModelError, core.CodeToolError, core.CodeCancelled, core.CodeTimeout, core.CodeInternal, core.CodeHistoryDiverged,
		httpapi.CodeUnauthorized, httpapi.CodeNotFound, httpapi.CodeMethodNotAllowed,
	}
	want := map[string]string{}
	for _, c := range api {
		want[string(c)] = strconv.Itoa(httpapi.StatusOf(c))
	}
	// run_lost: asked of a durable conversation for a run it never ran.
	rt, err := core.New(core.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	h := durable.New(durable.Config{API: httpapi.New(httpapi.Config{Runtime: rt}), Runtime: rt, Store: noStore{}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/sessions/c/runs/r-none", nil))
	var lost struct{ Error struct{ Code string } }
	if err := json.Unmarshal(rec.Body.Bytes(), &lost); err != nil || lost.Error.Code != string(durable.CodeRunLost) {
		t.Fatalf("GET of an unknown run: %d %s", rec.Code, rec.Body)
	}
	want[lost.Error.Code] = strconv.Itoa(rec.Code)
	// The glue's own codes, on no HTTP answer.
	for _, c := range []string{"load_failed", "network_error"} {
		want[c] = ""
	}
	glue := ""
	for _, f := range glueSources(t, root) {
		glue += readDoc(t, root, "js/"+f)
	}

	for code, status := range want {
		got, ok := stated[code]
		switch {
		case !ok:
			t.Errorf("docs/contract.md's table of errors lacks %s (HTTP %q)", code, status)
		case got != status:
			t.Errorf("docs/contract.md says %s answers HTTP %q; the code answers %q", code, got, status)
		}
		if status == "" && !strings.Contains(glue, `AgentrtError("`+code+`"`) {
			t.Errorf("docs/contract.md lists %s, which no file of js/ throws", code)
		}
	}
	for code := range stated {
		if _, ok := want[code]; !ok {
			t.Errorf("docs/contract.md lists a code %s this test does not know: add where it comes from", code)
		}
	}
}

// Ensure contract.md's Result lists the statuses and fields of the
// Result an HTTP run answers with: a run paused for approval (with its
// pendingApprovals and, under maxContextTokens, its context) and the
// completed run that resumes it.
func TestContract_ResultFields(t *testing.T) {
	root := repoRoot(t)
	m := regexp.MustCompile("`Result = \\{([^}`]*)\\}`").FindStringSubmatch(readDoc(t, root, "docs/contract.md"))
	if m == nil {
		t.Fatal("docs/contract.md no longer has `Result = { ... }`: keep this test in step with it")
	}
	fields, statuses := map[string]bool{}, map[string]bool{}
	for _, f := range strings.Split(m[1], ",") {
		f = strings.Join(strings.Fields(f), " ")
		name, value, _ := strings.Cut(f, ": ")
		fields[strings.TrimSuffix(name, "?")] = true
		for _, s := range regexp.MustCompile(`"(\w+)"`).FindAllStringSubmatch(value, -1) {
			statuses[s[1]] = true
		}
	}

	call := func(core.Context, core.ToolInvocation) (string, error) { return "ok", nil }
	rt, err := core.New(core.Config{Model: core.ModelFunc(mock.PayAndLook), Tools: []core.Tool{
		{ToolSpec: core.ToolSpec{Name: "pay"}, Call: call, NeedsApproval: func(core.ToolInvocation) (bool, error) { return true, nil }},
		{ToolSpec: core.ToolSpec{Name: "look"}, Call: call},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Runtime: rt}))
	defer srv.Close()
	seenFields, seenStatuses := map[string]bool{}, map[string]bool{}
	for _, body := range []string{
		`{"input":"x","policy":{"maxContextTokens":100000}}`,
		`{"approvals":[{"toolCallId":"pay-x","approved":true}]}`,
	} {
		res, err := http.Post(srv.URL+"/v1/sessions/s/runs", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		err = json.NewDecoder(res.Body).Decode(&r)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("POST %s: %d %v %v", body, res.StatusCode, r, err)
		}
		for k := range r {
			seenFields[k] = true
		}
		s, _ := r["status"].(string)
		seenStatuses[s] = true
	}
	for _, s := range []string{"completed", core.StatusAwaitingApproval} {
		if !seenStatuses[s] {
			t.Fatalf("the runs answered statuses %v, not %s: the test's runs are wrong", seenStatuses, s)
		}
	}
	if !equalSets(fields, seenFields) || !equalSets(statuses, seenStatuses) {
		t.Errorf("docs/contract.md's Result has fields %v and statuses %v; HTTP answers fields %v and statuses %v",
			keys(fields), keys(statuses), keys(seenFields), keys(seenStatuses))
	}
}

// Ensure wasi.md's config frame versions are those package wire reads and
// writes: the binary versions, and the one that adds approval modes.
func TestWasiMD_ConfigVersions(t *testing.T) {
	root := repoRoot(t)
	md := readDoc(t, root, "docs/wasi.md")
	m := regexp.MustCompile(`this module reads the binary versions (\d+), (\d+) and (\d+)`).FindStringSubmatch(md)
	a := regexp.MustCompile(`Version (\d+) adds each tool's approval mode`).FindStringSubmatch(md)
	g := regexp.MustCompile(`config  = "ARC" version\(0x0(\d) or 0x0(\d)`).FindStringSubmatch(md)
	if m == nil || a == nil || g == nil {
		t.Fatal("docs/wasi.md no longer states the config frame's versions as this test reads them: keep it in step")
	}
	want := []string{strconv.Itoa(wire.ConfigVersion1), strconv.Itoa(wire.ConfigVersion), strconv.Itoa(wire.ConfigVersionApprovals)}
	if got := m[1:]; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("docs/wasi.md says the module reads versions %v; wire reads %v", got, want)
	}
	if a[1] != want[2] {
		t.Errorf("docs/wasi.md says version %s adds approval modes; wire's is %s", a[1], want[2])
	}
	if g[1] != want[1] || g[2] != want[2] {
		t.Errorf("docs/wasi.md's grammar has versions %s and %s; wire writes %s and %s", g[1], g[2], want[1], want[2])
	}
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
