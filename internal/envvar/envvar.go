// Package envvar names agentrt's environment variables, once. The module
// reads Global; the worker and the CLI's chat command read the model's
// settings; the worker reads the rest. JavaScript hosts set Global
// through Go's env object (js/glue.js, keep in sync).
package envvar

const (
	// Prefix starts every name below.
	Prefix = "AGENTRT_"
	// Global names the global the module publishes its API at
	// (default "agentrt").
	Global = "AGENTRT_GLOBAL"
	// Token is the worker's bearer token (a secret; empty: no auth).
	Token = "AGENTRT_TOKEN"
	// ApprovalSecret keys the worker's signatures of the calls its runs
	// pause on (a secret; empty: nothing is signed, and a resume of a
	// call that came with a client's history is not checked).
	ApprovalSecret = "AGENTRT_APPROVAL_SECRET"
	// Model is "echo" (the default) or "openai".
	Model = "AGENTRT_MODEL"
	// OpenAIBaseURL is the API root of an OpenAI-compatible server, e.g.
	// https://api.openai.com/v1.
	OpenAIBaseURL = "AGENTRT_OPENAI_BASE_URL"
	// OpenAIModel is the model name sent upstream.
	OpenAIModel = "AGENTRT_OPENAI_MODEL"
	// OpenAIKey is the upstream key (a secret: never a flag).
	OpenAIKey = "AGENTRT_OPENAI_KEY"
	// MaxBodyBytes bounds the worker's request bodies (default 1 MiB).
	MaxBodyBytes = "AGENTRT_MAX_BODY_BYTES"
	// SystemPrompt is the worker's system prompt (optional).
	SystemPrompt = "AGENTRT_SYSTEM_PROMPT"
	// Sessions chooses the worker's deployment: "isolate" (the default)
	// or "durable" (a Durable Object per conversation).
	Sessions = "AGENTRT_SESSIONS"
	// MaxStoredBytes bounds the stored bytes of one conversation in the
	// durable deployment.
	MaxStoredBytes = "AGENTRT_MAX_STORED_BYTES"
	// TestFaults set to "1" enables the worker's test-only fault routes.
	// Never set it in a deployment.
	TestFaults = "AGENTRT_TEST_FAULTS"
)
