package contract

import (
	"slices"
	"testing"
)

// Ops is the operations' edge table, testdata/edges/ops.json
// (docs/adr/0024-one-definition-per-operation.md): each control
// operation with its name on every surface, or "" where that surface
// does not offer it, and the turn methods of each surface. Each
// surface's test holds the surface to it both ways: every name the table
// gives the surface is there, and the surface has no method or export
// the table does not name, so a surface left out of a new operation, or
// an operation added to one surface only, fails a test.
type Ops struct {
	// Turns are each surface's turn methods, by surface.
	Turns map[string][]string `json:"turns"`
	// Operations are the control operations.
	Operations []Op `json:"operations"`
}

// Op is one control operation of the table. A field is "" where its
// surface does not offer the operation.
type Op struct {
	// Name is the operation's name.
	Name string `json:"name"`
	// Core is the method of *core.Runtime.
	Core string `json:"core"`
	// Export is the wire's export (both modules): agentrt_op for an
	// operation of the modules' table of operations, which that one
	// export runs by name.
	Export string `json:"export"`
	// Module is the method of the GOOS=js module's syscall/js Runtime object.
	Module string `json:"module"`
	// Glue is the method of the glue's Runtime (both modes).
	Glue string `json:"glue"`
	// Wasihost is the method of *wasihost.Runtime.
	Wasihost string `json:"wasihost"`
	// HTTP is the route, "METHOD /path" with {id} for a session id.
	HTTP string `json:"http"`
}

// Surface returns the names the table gives surface ("core", "export",
// "module", "glue", "wasihost"): its control operations' and its turn
// methods', sorted, each once.
func (o *Ops) Surface(surface string) []string {
	out := slices.Clone(o.Turns[surface])
	for _, op := range o.Operations {
		var n string
		switch surface {
		case "core":
			n = op.Core
		case "export":
			n = op.Export
		case "module":
			n = op.Module
		case "glue":
			n = op.Glue
		case "wasihost":
			n = op.Wasihost
		}
		if n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TableOps returns the names of the operations the modules run through
// their op export (Export "agentrt_op").
func (o *Ops) TableOps() []string {
	var out []string
	for _, op := range o.Operations {
		if op.Export == OpExport {
			out = append(out, op.Name)
		}
	}
	return out
}

// OpExport is the wire's export of the modules' table of operations.
const OpExport = "agentrt_op"

// MustLoadOps reads testdata/edges/ops.json, failing t when it cannot.
func MustLoadOps(t testing.TB) *Ops {
	t.Helper()
	var o Ops
	f := mustDecodeEdges(t, "ops.json", &o)
	if len(o.Operations) == 0 {
		t.Fatalf("%s holds no operation", f)
	}
	return &o
}
