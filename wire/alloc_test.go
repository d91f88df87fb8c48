package wire

import (
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure decoding the frame of a quick turn's commit allocates the
// frame's one string and nothing more: the reader stays on the stack
// (newReader is inlined). Every warm turn of the glue decodes one, and
// a reader on the heap was a second allocation per turn, garbage for the
// module's collector.
func TestDecodeCommitInto_Allocs(t *testing.T) {
	frame := AppendCommit(nil, &core.Commit{SessionID: "s", RunID: "glue:1", Input: "next", MirrorGen: 1, MirrorLen: 100, Reply: "ok"})
	var c core.Commit
	allocs := testing.AllocsPerRun(100, func() {
		if err := DecodeCommitInto(&c, frame); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Fatalf("DecodeCommitInto allocates %v times, want 1 (the frame's string)", allocs)
	}
	if c.SessionID != "s" || c.Reply != "ok" || c.MirrorLen != 100 {
		t.Fatalf("decoded %+v", c)
	}
}
