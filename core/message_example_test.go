package core_test

import (
	"encoding/json"
	"fmt"

	"github.com/agentrt/agentrt/core"
)

// A Go host stores each turn's messages as JSON, in the shape every other
// edge uses, and after a restart passes them back as history: the new
// runtime's empty session is seeded from them once.
func ExampleSeedMessages() {
	rt, err := core.New(core.Config{})
	if err != nil {
		panic(err)
	}
	res, err := rt.Execute(core.Background(), core.RunRequest{SessionID: "chat-1", Input: "hello"})
	if err != nil {
		panic(err)
	}
	stored, _ := json.Marshal(res.Appended)
	fmt.Println(string(stored))
	rt.Close()

	// A new process: the session is gone; the stored turns seed it.
	var history []core.Message
	if err := json.Unmarshal(stored, &history); err != nil {
		panic(err)
	}
	rt, err = core.New(core.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	res, err = rt.Execute(core.Background(), core.RunRequest{
		SessionID: "chat-1", Input: "again", History: core.SeedMessages(history), WithHistory: true,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Seed.Mode, res.Seed.Seeded)
	// Output:
	// [{"role":"user","content":"hello"},{"role":"assistant","content":"echo: hello (model received 1 messages)"}]
	// cold 2
}
