package wasihost

import (
	"encoding/json"

	"github.com/agentrt/agentrt/core/hostmsg"
)

// configJSON is cfg as the JSON text of a config frame of version 3, the
// frame the GOOS=js module reads (docs/wire.md, "Config frame"), written
// as the glue writes it: a Go model is "host" (this package answers its
// calls), no model is the module's echo; a tool is its name, description,
// parameters (JSON text) and needsApproval when its calls are asked of
// the host; non-zero limits by their field names; countByAction when
// the host counts tokens. The module's reader checks it, with the texts
// and codes every edge gives.
func configJSON(cfg *Config) string {
	type tool struct {
		Name          string `json:"name"`
		Description   string `json:"description,omitempty"`
		Parameters    string `json:"parameters,omitempty"`
		NeedsApproval bool   `json:"needsApproval,omitempty"`
	}
	c := struct {
		SystemPrompt  string           `json:"systemPrompt,omitempty"`
		Model         string           `json:"model,omitempty"`
		Tools         []tool           `json:"tools,omitempty"`
		Limits        map[string]int64 `json:"limits,omitempty"`
		CountByAction bool             `json:"countByAction,omitempty"`
	}{SystemPrompt: cfg.SystemPrompt, CountByAction: cfg.CountTokens != nil}
	if cfg.Model != nil {
		c.Model = "host"
	}
	for i := range cfg.Tools {
		t := &cfg.Tools[i]
		c.Tools = append(c.Tools, tool{t.Name, t.Description, t.Parameters, t.NeedsApproval != nil})
	}
	l := &cfg.Limits
	for _, f := range [...]struct {
		name string
		n    int64
	}{
		{hostmsg.FieldMaxSessions, int64(l.MaxSessions)},
		{hostmsg.FieldMaxMessagesPerSession, int64(l.MaxMessagesPerSession)},
		{hostmsg.FieldMaxSessionBytes, l.MaxSessionBytes},
		{hostmsg.FieldMaxSeedMessages, int64(l.MaxSeedMessages)},
		{hostmsg.FieldMaxSeedBytes, l.MaxSeedBytes},
		{hostmsg.FieldMaxMessageBytes, l.MaxMessageBytes},
		{hostmsg.FieldMaxTotalBytes, l.MaxTotalBytes},
	} {
		if f.n != 0 {
			if c.Limits == nil {
				c.Limits = map[string]int64{}
			}
			c.Limits[f.name] = f.n
		}
	}
	b, err := json.Marshal(c)
	if err != nil { // strings and numbers only: it cannot fail
		panic(err)
	}
	return string(b)
}
