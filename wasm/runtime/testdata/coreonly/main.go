// Command coreonly links core with the least JavaScript glue that drives
// it: one function that runs a turn and reports through a callback.
// size_test.go builds it to show how much of the module's size is core's
// own (the store, seeding, the run loop) and how much is the JavaScript edge.
package main

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
)

func main() {
	rt, _ := core.New(core.Config{})
	js.Global().Set("agentrtCoreOnly", js.FuncOf(func(this js.Value, args []js.Value) any {
		go func() {
			ctx := core.Background()
			r, err := rt.Start(ctx, core.RunRequest{SessionID: args[0].String(), Input: "x", OnEvent: func(core.Event) {}})
			if err != nil {
				return
			}
			res, _ := r.Wait(ctx)
			s, _ := rt.Session("x")
			args[1].Invoke(res.Reply.Content, len(s.Messages), rt.CancelRun("x"), rt.DeleteSession("x"), len(rt.ListSessions()), rt.Stats().Bytes)
		}()
		return nil
	}))
	select {}
}
