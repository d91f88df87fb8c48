package main

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
	"github.com/agentrt/agentrt/internal/envvar"
	"github.com/agentrt/agentrt/openai"
)

// The worker's environment variables (wrangler vars and secrets).
const (
	EnvToken = envvar.Token // secret: bearer token; empty = no auth
	// EnvApprovalSecret keys the signatures of paused calls (a secret;
	// empty: none, and resumes are not checked): see
	// docs/adr/0023-approval-trust.md.
	EnvApprovalSecret = envvar.ApprovalSecret
	EnvModel          = envvar.Model         // "echo" (default) or "openai"
	EnvOpenAIBaseURL  = envvar.OpenAIBaseURL // e.g. https://api.openai.com/v1
	EnvOpenAIModel    = envvar.OpenAIModel   // model name sent upstream
	EnvOpenAIKey      = envvar.OpenAIKey     // secret
	EnvMaxBodyBytes   = envvar.MaxBodyBytes  // default 1 MiB
	EnvSystemPrompt   = envvar.SystemPrompt  // optional
	// EnvSessions is "isolate" (the default) or "durable": a Durable
	// Object per conversation (docs/adr/0014-durable-sessions.md).
	EnvSessions = envvar.Sessions
	// EnvMaxStoredBytes bounds a conversation's stored bytes in the
	// durable deployment (default durable.DefaultMaxStoredBytes).
	EnvMaxStoredBytes = envvar.MaxStoredBytes
	// EnvTestFaults set to "1" enables the test-only fault routes (see
	// withFaults). Never set it in a deployment.
	EnvTestFaults = envvar.TestFaults
	// EnvTestRunEvents and EnvTestRunEventBytes, read only with
	// EnvTestFaults, bound each continued run's event log (durable
	// Config.MaxRunEvents and MaxRunEventBytes) below the defaults, so
	// that a test passes the bounds with a few short runs.
	EnvTestRunEvents     = "AGENTRT_TEST_RUN_EVENTS"
	EnvTestRunEventBytes = "AGENTRT_TEST_RUN_EVENT_BYTES"
	// EnvTestCounter, read only with EnvTestFaults, set to "bytes"
	// replaces core's estimate with the test counter (testCounter: a
	// message's bytes, counting its calls) and adds its tool "counted".
	EnvTestCounter = "AGENTRT_TEST_COUNTER"
)

// config is the worker's configuration.
type config struct {
	Token string
	// ApprovalSecret is EnvApprovalSecret.
	ApprovalSecret string
	SystemPrompt   string
	// Model is nil for echo.
	Model        *openai.Model
	MaxBodyBytes int64
	// Durable is set by EnvSessions "durable".
	Durable bool
	// MaxStoredBytes is EnvMaxStoredBytes; 0 means the default.
	MaxStoredBytes int64
	// TestFaults enables the fault routes (EnvTestFaults), and the test
	// tools (testTools).
	TestFaults bool
	// RunEvents and RunEventBytes are EnvTestRunEvents and
	// EnvTestRunEventBytes; 0 means the defaults.
	RunEvents     int
	RunEventBytes int64
	// Tools are the runtime's tools; a tool's NeedsApproval pauses a run
	// before it runs (docs/adr/0019-tool-approvals.md).
	Tools []core.Tool
	// CountTokens counts a message's tokens for policy.maxContextTokens
	// (docs/adr/0018-context-window-by-tokens.md); nil counts with core's
	// estimate. The worker reads no tokenizer from its environment: a
	// Worker's own Go code supplies its tokenizer here, and the runtime
	// of either deployment counts with it.
	CountTokens core.TokenCounter
}

// configFrom reads the configuration through get (the worker's env). The
// openai model's Client is left nil for the caller to set.
func configFrom(get func(string) string) (config, error) {
	c := config{Token: get(EnvToken), ApprovalSecret: get(EnvApprovalSecret), SystemPrompt: get(EnvSystemPrompt), MaxBodyBytes: httpapi.DefaultMaxBodyBytes, TestFaults: get(EnvTestFaults) == "1"}
	if s := strings.TrimSpace(get(EnvMaxBodyBytes)); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return c, errors.New(EnvMaxBodyBytes + " must be a positive integer")
		}
		c.MaxBodyBytes = n
	}
	switch m := strings.TrimSpace(get(EnvSessions)); m {
	case "", "isolate":
	case "durable":
		c.Durable = true
	default:
		return c, errors.New(EnvSessions + " must be \"isolate\" or \"durable\"")
	}
	if s := strings.TrimSpace(get(EnvMaxStoredBytes)); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return c, errors.New(EnvMaxStoredBytes + " must be a positive integer")
		}
		c.MaxStoredBytes = n
	}
	if c.TestFaults {
		for _, b := range []struct {
			name string
			set  func(int64)
		}{
			{EnvTestRunEvents, func(n int64) { c.RunEvents = int(n) }},
			{EnvTestRunEventBytes, func(n int64) { c.RunEventBytes = n }},
		} {
			if s := strings.TrimSpace(get(b.name)); s != "" {
				n, err := strconv.ParseInt(s, 10, 32)
				if err != nil || n <= 0 {
					return c, errors.New(b.name + " must be a positive integer")
				}
				b.set(n)
			}
		}
		c.Tools = testTools()
		switch m := strings.TrimSpace(get(EnvTestCounter)); m {
		case "":
		case "bytes":
			tc := &testCounter{}
			c.CountTokens = tc.count
			c.Tools = append(c.Tools, tc.tool())
		default:
			return c, errors.New(EnvTestCounter + " must be \"bytes\" or empty")
		}
	}
	switch m := strings.TrimSpace(get(EnvModel)); m {
	case "", "echo":
	case "openai":
		base, name := strings.TrimSpace(get(EnvOpenAIBaseURL)), strings.TrimSpace(get(EnvOpenAIModel))
		if !strings.HasPrefix(base, "https://") && !strings.HasPrefix(base, "http://") {
			return c, errors.New(EnvOpenAIBaseURL + " must be an http(s) URL when " + EnvModel + " is \"openai\"")
		}
		if name == "" {
			return c, errors.New(EnvOpenAIModel + " must be set when " + EnvModel + " is \"openai\"")
		}
		// Streamed (stream: true): each text delta reaches the run, and a
		// streamed run's client, as the upstream sends it.
		c.Model = &openai.Model{BaseURL: base, Model: name, Key: get(EnvOpenAIKey), Stream: true}
	default:
		return c, errors.New(EnvModel + " must be \"echo\" or \"openai\"")
	}
	return c, nil
}

// runtimeConfig is the core configuration for c.
func (c *config) runtimeConfig() core.Config {
	cfg := core.Config{SystemPrompt: c.SystemPrompt, AfterFunc: afterFunc, Tools: c.Tools, CountTokens: c.CountTokens,
		SignApproval: httpapi.ApprovalSigner([]byte(c.ApprovalSecret))}
	if c.Model != nil {
		cfg.Model = c.Model
	}
	return cfg
}

// afterFunc schedules run timeouts with package time. Under GOOS=js core
// has no timers of its own; the worker links package time anyway (through
// net/http), unlike the browser module, which uses setTimeout.
func afterFunc(ms int64, f func()) func() {
	t := time.AfterFunc(time.Duration(ms)*time.Millisecond, f)
	return func() { t.Stop() }
}
