package core_test

import (
	"context"
	"fmt"

	"github.com/agentrt/agentrt/core"
)

// A cold session is seeded from the host's history once; the next turn on
// the warm session passes the same history and seeds nothing. The
// README's Go snippet is taken from this example (TestReadme_GoSnippet).
func Example() {
	ctx := context.Background()
	history := []core.SeedMessage{ // the host's durable copy
		{Role: core.RoleUser, Content: "hello"},
		{Role: core.RoleAssistant, Content: "hi"},
	}

	rt, _ := core.New(core.Config{SystemPrompt: "Be brief."}) // model: core.Echo{} by default
	defer rt.Close()
	run, err := rt.StartRunWithHistory(ctx, "chat-1", "and now?", history)
	if err != nil {
		// *core.Error: Code "invalid_history", Index 3, ...; nothing changed
		panic(err)
	}
	res, err := run.Wait(ctx)
	// res.Seed.Mode == core.SeedCold the first time, core.SeedNoop after.
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Seed.Mode, res.Seed.Seeded, res.Reply.Content)
	history = append(history, core.SeedMessages(res.Appended)...) // store the turn, tool calls and all

	run, _ = rt.StartRunWithHistory(ctx, "chat-1", "again", history)
	res, _ = run.Wait(ctx)
	fmt.Println(res.Seed.Mode, res.Seed.Seeded, res.Reply.Content)
	// Output:
	// cold 2 echo: and now? (model received 3 messages)
	// noop 0 echo: again (model received 5 messages)
}

func ExampleRuntime_StartRun() {
	rt, _ := core.New(core.Config{})
	defer rt.Close()
	run, _ := rt.StartRun(context.Background(), "s", "ping")
	res, _ := run.Wait(context.Background())
	fmt.Println(res.Status, res.Seed.Mode, res.Reply.Content)
	// Output: completed none echo: ping (model received 1 messages)
}

func ExampleRuntime_StartRunWithPolicy() {
	rt, _ := core.New(core.Config{})
	defer rt.Close()
	ctx := context.Background()
	for _, in := range []string{"one", "two", "three"} {
		// The model is sent at most the last 2 messages; the session
		// keeps all of them.
		run, _ := rt.StartRunWithPolicy(ctx, "s", in, core.Policy{MaxContextMessages: 2})
		res, _ := run.Wait(ctx)
		fmt.Println(res.Reply.Content, res.MessageCount)
	}
	// Output:
	// echo: one (model received 1 messages) 2
	// echo: two (model received 2 messages) 4
	// echo: three (model received 2 messages) 6
}

func ExampleRuntime_StartRunWithPolicyAndHistory() {
	rt, _ := core.New(core.Config{})
	defer rt.Close()
	ctx := context.Background()
	history := []core.SeedMessage{{Role: core.RoleUser, Content: "a"}, {Role: core.RoleAssistant, Content: "b"}}
	run, _ := rt.StartRunWithHistory(ctx, "s", "c", history)
	res, _ := run.Wait(ctx)

	// Another tab added a turn the warm session has not seen: reconcile
	// appends it before this turn.
	for _, m := range res.Appended {
		history = append(history, core.SeedMessage{Role: m.Role, Content: m.Content})
	}
	history = append(history, core.SeedMessage{Role: core.RoleUser, Content: "from the other tab"},
		core.SeedMessage{Role: core.RoleAssistant, Content: "noted"})
	run, _ = rt.StartRunWithPolicyAndHistory(ctx, "s", "d", core.Policy{SeedMode: core.SeedReconcile}, history)
	res, _ = run.Wait(ctx)
	fmt.Println(res.Seed.Mode, res.Seed.Seeded, res.MessageCount)
	// Output: appended 2 8
}

func ExampleRuntime_Execute() {
	rt, _ := core.New(core.Config{})
	defer rt.Close()
	// Execute runs the turn in this goroutine and returns its result.
	res, err := rt.Execute(core.Background(), core.RunRequest{SessionID: "s", Input: "hi"})
	fmt.Println(res.Reply.Content, err)
	// Output: echo: hi (model received 1 messages) <nil>
}

func ExampleValidateHistory() {
	err := core.ValidateHistory([]core.SeedMessage{
		{Role: core.RoleUser, Content: "weather?"},
		{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c1", Name: "weather", Arguments: "{}"}}, ContentMissing: true},
		{Role: core.RoleUser, Content: "hello?"},
	}, core.Limits{})
	fmt.Println(core.ErrorCode(err))
	fmt.Println(err)
	// Output:
	// invalid_history
	// invalid_history: tool call "c1" has no tool result before the next user or assistant message (index 1)
}
