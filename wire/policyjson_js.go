//go:build js

package wire

import "github.com/agentrt/agentrt/core"

// policyJSONReader reads a begin frame's JSON policy in the GOOS=js
// module: the JavaScript edge (wasm/internal/jsedge) sets it to JSON.parse and
// hostmsg.Policy over the JavaScript value, the reader its syscall/js API
// calls (see policyjson.go for why not a parser of this package).
var policyJSONReader func(text string) (core.Policy, error)

// SetPolicyJSONReader sets how a GOOS=js module reads the JSON text of a
// begin frame's policy (wasm/internal/jsedge sets it). Without one, such a
// policy is refused.
func SetPolicyJSONReader(read func(text string) (core.Policy, error)) { policyJSONReader = read }

func readPolicyJSON(text string) (core.Policy, error) {
	if policyJSONReader == nil {
		return core.Policy{}, core.NewError(core.CodeInvalidArgument, "wire: this module reads no policy as JSON text")
	}
	return policyJSONReader(text)
}
