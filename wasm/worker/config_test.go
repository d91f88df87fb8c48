package main

import (
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure the environment is read into the configuration, and every bad
// value is refused with a message that names the variable but never
// echoes a secret.
func TestConfigFrom(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string // empty: no error
		check   func(t *testing.T, c config)
	}{
		{name: "OK/defaults", env: map[string]string{}, check: func(t *testing.T, c config) {
			if c.Model != nil || c.Token != "" || c.MaxBodyBytes != 1<<20 {
				t.Errorf("got %+v", c)
			}
		}},
		{name: "OK/openai", env: map[string]string{EnvModel: "openai", EnvOpenAIBaseURL: "https://api.example.com/v1", EnvOpenAIModel: "m1", EnvOpenAIKey: "k", EnvToken: "t", EnvMaxBodyBytes: "2048"},
			check: func(t *testing.T, c config) {
				if c.Model == nil || c.Model.BaseURL != "https://api.example.com/v1" || c.Model.Model != "m1" || c.Model.Key != "k" || !c.Model.Stream || c.Token != "t" || c.MaxBodyBytes != 2048 {
					t.Errorf("got %+v", c)
				}
				if rc := c.runtimeConfig(); rc.Model == nil {
					t.Error("runtime config has no model")
				}
			}},
		{name: "OK/durable", env: map[string]string{EnvSessions: "durable", EnvMaxStoredBytes: "4096"}, check: func(t *testing.T, c config) {
			if !c.Durable || c.MaxStoredBytes != 4096 {
				t.Errorf("got %+v", c)
			}
		}},
		{name: "OK/isolate", env: map[string]string{EnvSessions: "isolate"}, check: func(t *testing.T, c config) {
			if c.Durable || c.MaxStoredBytes != 0 {
				t.Errorf("got %+v", c)
			}
		}},
		{name: "OK/runBounds", env: map[string]string{EnvTestFaults: "1", EnvTestRunEvents: "3", EnvTestRunEventBytes: "900"}, check: func(t *testing.T, c config) {
			if c.RunEvents != 3 || c.RunEventBytes != 900 {
				t.Errorf("got %+v", c)
			}
		}},
		{name: "OK/runBoundsWithoutFaults", env: map[string]string{EnvTestRunEvents: "3"}, check: func(t *testing.T, c config) {
			if c.RunEvents != 0 {
				t.Errorf("got %+v, want the bound ignored without %s", c, EnvTestFaults)
			}
		}},
		{name: "OK/testCounter", env: map[string]string{EnvTestFaults: "1", EnvTestCounter: "bytes"}, check: func(t *testing.T, c config) {
			if c.CountTokens == nil || len(c.Tools) != 4 || c.Tools[3].Name != "counted" {
				t.Errorf("got %+v, want the test counter and its tool", c)
			}
			if n, err := c.CountTokens(core.Message{Role: core.RoleUser, Content: "hello"}); n != 5 || err != nil {
				t.Errorf("count: got %d %v, want 5 (bytes)", n, err)
			}
		}},
		{name: "OK/testCounterWithoutFaults", env: map[string]string{EnvTestCounter: "bytes"}, check: func(t *testing.T, c config) {
			if c.CountTokens != nil || len(c.Tools) != 0 {
				t.Errorf("got %+v, want the counter ignored without %s", c, EnvTestFaults)
			}
		}},
		{name: "ErrTestCounter", env: map[string]string{EnvTestFaults: "1", EnvTestCounter: "words"}, wantErr: EnvTestCounter},
		{name: "ErrRunEvents", env: map[string]string{EnvTestFaults: "1", EnvTestRunEvents: "0"}, wantErr: EnvTestRunEvents},
		{name: "ErrSessions", env: map[string]string{EnvSessions: "objects"}, wantErr: EnvSessions},
		{name: "ErrStoredLimit", env: map[string]string{EnvMaxStoredBytes: "0"}, wantErr: EnvMaxStoredBytes},
		{name: "ErrUnknownModel", env: map[string]string{EnvModel: "gpt"}, wantErr: EnvModel},
		{name: "ErrBaseURL", env: map[string]string{EnvModel: "openai", EnvOpenAIBaseURL: "ftp://x", EnvOpenAIModel: "m"}, wantErr: EnvOpenAIBaseURL},
		{name: "ErrNoModelName", env: map[string]string{EnvModel: "openai", EnvOpenAIBaseURL: "https://x", EnvOpenAIKey: "sekrit"}, wantErr: EnvOpenAIModel},
		{name: "ErrBodyLimit", env: map[string]string{EnvMaxBodyBytes: "-5"}, wantErr: EnvMaxBodyBytes},
		{name: "ErrBodyLimitText", env: map[string]string{EnvMaxBodyBytes: "lots"}, wantErr: EnvMaxBodyBytes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := configFrom(func(k string) string { return tc.env[k] })
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("got error %v", err)
				}
				tc.check(t, c)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want an error naming %s", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "sekrit") {
				t.Errorf("the error echoes a secret: %v", err)
			}
		})
	}
}

// Ensure the worker's runtime can time runs out: under GOOS=js core has no
// timers unless the edge passes them.
func TestConfig_RuntimeConfig_HasTimers(t *testing.T) {
	cfg := (&config{}).runtimeConfig()
	if cfg.AfterFunc == nil {
		t.Fatal("runtimeConfig has no AfterFunc")
	}
	fired := make(chan struct{})
	cfg.AfterFunc(1, func() { close(fired) })
	<-fired
}
