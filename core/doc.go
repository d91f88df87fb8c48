// Package core is agentrt's session runtime in pure Go: the in-process
// session store, seeding from host-supplied history, and the run loop
// (model calls, tools, events, cancellation, rollback). It never imports
// syscall/js; the JavaScript and HTTP edges convert to and from its types.
//
// A host keeps the durable history; a Runtime keeps live sessions in
// memory. After a cold start a session is empty, so a run may carry the
// host's prior turns, and the runtime seeds the empty session with them
// exactly once:
//
//	rt, _ := core.New(core.Config{SystemPrompt: "Be brief."})
//	run, err := rt.StartRunWithHistory(ctx, "chat-1", "and now?", history)
//	if err != nil { ... } // *core.Error: invalid_history, index 3, ...
//	res, err := run.Wait(ctx)
//	// res.Seed.Mode == core.SeedCold the first time, SeedNoop after.
//
// Every error is an *Error with a stable Code; see ErrorCode.
//
// The API is unstable until version 1.0.
package core
