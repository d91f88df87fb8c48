package wire_test

import (
	"fmt"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

func ExampleEncodeHistory() {
	b := wire.EncodeHistory([]core.SeedMessage{{Role: core.RoleUser, Content: "hi", ID: "a"}})
	fmt.Printf("% x\n", b)
	fmt.Printf("% x\n", wire.EncodeHistory(nil))
	// Output:
	// 41 52 48 01 01 00 03 02 68 69 01 61
	// 41 52 48 01 00
}

func ExampleDecodeHistoryBytes() {
	h, err := wire.DecodeHistoryBytes([]byte("ARH\x01\x02\x00\x01\x02hi\x09\x01\x00"), 0)
	fmt.Println(h, err)
	h, err = wire.DecodeHistoryBytes([]byte("ARH\x01\x01\x00\x01\x02hi"), 0)
	fmt.Println(len(h), h[0].Role, h[0].Content, err)
	// Output:
	// [] invalid_history: packed history: unknown role byte 9 (index 1)
	// 1 user hi <nil>
}
