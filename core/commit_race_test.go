package core_test

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// echoLast answers every call with "re:" and the last message's text.
type echoLast struct{}

func (echoLast) Complete(_ core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	return reply("re:" + req.Messages[len(req.Messages)-1].Content), nil
}

func TestRuntime_CommitUnderLoad(t *testing.T) {
	// Ensure commits racing turns driven by hand, runs executed, cancels,
	// reverts and deletes on the same sessions keep every session whole:
	// each input followed by its own reply, and the store's counters
	// those of its sessions (run with -race).
	rt := mustRuntime(t, core.Config{Model: echoLast{}})
	sessions := []string{"a", "b"}
	execute := func(sid, id string) {
		if _, err := rt.Execute(bg, core.RunRequest{SessionID: sid, Input: id, RunID: id}); err != nil && core.AsError(err).Code != core.CodeCancelled {
			t.Error(err)
		}
	}
	var committed atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 60; i++ {
				sid := sessions[(g+i)%2]
				id := "g" + itoa(g) + "-" + itoa(i)
				switch (g + i) % 6 {
				case 0, 1:
					s, ok := rt.Session(sid)
					if !ok {
						execute(sid, id)
						continue
					}
					if _, stale, err := rt.Commit(&core.Commit{SessionID: sid, RunID: id, Input: id,
						MirrorGen: s.Generation, MirrorLen: len(s.Messages), Reply: "re:" + id}); err != nil {
						t.Error(err)
					} else if !stale {
						committed.Add(1)
					}
				case 2:
					tn, err := rt.Begin(bg, core.RunRequest{SessionID: sid, Input: id, RunID: id})
					if err != nil {
						t.Error(err)
						return
					}
					a := tn.Next()
					for a.Kind == core.ActionWait {
						// The holder must get to run on one thread too.
						runtime.Gosched()
						a = tn.Next()
					}
					if a.Kind == core.ActionModel {
						a = tn.FeedModel(reply("re:"+id), nil)
					}
					if a.Kind == core.ActionFailed && a.Err.Code != core.CodeCancelled {
						t.Errorf("%s failed: %v", id, a.Err)
					}
					tn.Recycle()
				case 3:
					r, err := rt.Start(bg, core.RunRequest{SessionID: sid, Input: id, RunID: id})
					if err != nil {
						t.Error(err)
						return
					}
					rt.CancelRun("g" + itoa((g+1)%8) + "-" + itoa(i))
					if res, err := r.Wait(bg); err == nil && (i%4 == 0) {
						rt.RevertRun(sid, res.RunID)
					}
				case 4:
					if i%5 == 0 {
						rt.DeleteSession(sid)
					} else {
						rt.Session(sid)
						rt.Stats()
					}
				case 5:
					execute(sid, id)
				}
			}
		}()
	}
	wg.Wait()
	st := rt.Stats()
	total := 0
	for _, sid := range rt.ListSessions() {
		msgs := messagesOf(rt, sid)
		total += len(msgs)
		if len(msgs)%2 != 0 {
			t.Fatalf("session %s holds %d messages", sid, len(msgs))
		}
		for i := 0; i < len(msgs); i += 2 {
			if msgs[i].Role != core.RoleUser || msgs[i+1].Content != "re:"+msgs[i].Content || !strings.HasPrefix(msgs[i].Content, "g") {
				t.Fatalf("session %s, message %d: %+v then %+v", sid, i, msgs[i], msgs[i+1])
			}
		}
	}
	if committed.Load() == 0 {
		t.Fatal("no commit was stored")
	}
	if st.ActiveRuns != 0 || st.Messages != total || st.BudgetUsed != st.Bytes+int64(st.Messages)*core.MessageOverhead {
		t.Fatalf("stats %+v, sessions hold %d messages", st, total)
	}
}
