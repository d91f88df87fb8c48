package wasihost

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
)

// methods returns the exported methods of the type of v, sorted.
func methods(v any) []string {
	t := reflect.TypeOf(v)
	out := make([]string, 0, t.NumMethod())
	for i := 0; i < t.NumMethod(); i++ {
		out = append(out, t.Method(i).Name)
	}
	slices.Sort(out)
	return out
}

// agentrtExports returns the agentrt_ exports among names, sorted.
func agentrtExports(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, "agentrt_") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Ensure core.Runtime, wasihost.Runtime and the wire exports of both
// modules have every operation of the operations' edge table
// (testdata/edges/ops.json), and no method or export it does not name:
// an operation left out of one of them, or added to one only, fails here
// (docs/adr/0024-one-definition-per-operation.md).
func TestOps_EveryGoSurface(t *testing.T) {
	ops := contract.MustLoadOps(t)
	for _, c := range []struct {
		surface string
		got     []string
	}{
		{"core", methods(&core.Runtime{})},
		{"wasihost", methods(&Runtime{})},
	} {
		if want := ops.Surface(c.surface); !slices.Equal(c.got, want) {
			t.Errorf("%s has %q; the table names %q", c.surface, c.got, want)
		}
	}
	needModules(t, module != nil && jsModule != nil)
	want := ops.Surface("export")
	var wasi []string
	for n := range module.compiled.ExportedFunctions() {
		wasi = append(wasi, n)
	}
	for name, fns := range map[string][]string{
		"the WASI module":    wasi,
		"the GOOS=js module": jsModule.ExportedFunctions(),
	} {
		if got := agentrtExports(fns); !slices.Equal(got, want) {
			t.Errorf("%s exports %q; the table names %q", name, got, want)
		}
	}
	// The operations of the module's table: its op export knows each by
	// name (a call with no arguments answers, or refuses the arguments,
	// but never names no operation), and no other.
	for _, m := range modules {
		rt := mustRuntime(t, m.start(t), Config{})
		for _, name := range append(ops.TableOps(), "noSuchOperation") {
			_, err := rt.op(name)
			unknown := err != nil && strings.Contains(err.Error(), "no operation")
			if unknown != (name == "noSuchOperation") {
				t.Errorf("%s: op %q: %v", m.name, name, err)
			}
		}
	}
}
