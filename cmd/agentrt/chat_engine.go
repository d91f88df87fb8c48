package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
	"github.com/agentrt/agentrt/openai"
	"github.com/agentrt/agentrt/wasihost"
)

// wasiEngine runs turns of `agentrt chat --wasi` on the WASI module
// driven by wasihost. The model, when not the module's echo, is called in
// Go; the module is sandboxed on plain wazero with no JavaScript world.
type wasiEngine struct {
	m  *wasihost.Module
	rt *wasihost.Runtime
}

func newWASIEngine(ctx context.Context, o chatOptions, model *openai.Model, stderr io.Writer) (*wasiEngine, error) {
	path, err := chatWASIModule(ctx, o.module)
	if err != nil {
		return nil, err
	}
	m, err := wasihost.CompileFile(ctx, path, &wasihost.CompileOptions{Stderr: stderr})
	if err != nil {
		return nil, err
	}
	in, err := m.Instantiate(ctx)
	if err != nil {
		m.Close(context.Background())
		return nil, err
	}
	cfg := wasihost.Config{SystemPrompt: o.system}
	if model != nil {
		cfg.Model = model
	}
	rt, err := in.NewRuntime(cfg)
	if err != nil {
		m.Close(context.Background())
		return nil, err
	}
	return &wasiEngine{m: m, rt: rt}, nil
}

func (e *wasiEngine) turn(ctx context.Context, session, input string, p core.Policy, h *historyFile) (*turnResult, error) {
	res, err := e.rt.Run(ctx, core.RunRequest{SessionID: session, Input: input, Policy: p, WithHistory: true, History: h.seed})
	if err != nil {
		if errors.Is(err, wasihost.ErrDead) || ctx.Err() != nil {
			return nil, err
		}
		x := core.AsError(err)
		return nil, &turnError{errorLine(x.Message, string(x.Code), x.Index)}
	}
	r := &turnResult{seed: res.Seed, reply: res.Reply.Content, appended: core.SeedMessages(res.Appended)}
	if res.Seed.Repaired != nil {
		if r.repaired, err = healedValues(h, res.Seed.Edits); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// healedValues renders the file's history with a seed's repair edits
// applied, in the file's own shapes, as the glue's seed.repaired is: the
// WASI module reports the edits, and hostjson applies them to the JSON the
// file holds.
func healedValues(h *historyFile, edits []core.HistoryEdit) ([]any, error) {
	b, err := encodeArray(h.raw)
	if err != nil {
		return nil, err
	}
	v, err := hostjson.Parse(b)
	if err != nil {
		return nil, err
	}
	var healed []any
	if err := json.Unmarshal(hostjson.AppendHealed(nil, v, edits), &healed); err != nil {
		return nil, fmt.Errorf("the healed history: %v", err)
	}
	return healed, nil
}

func (e *wasiEngine) close() {
	e.rt.Close()
	e.m.Close(context.Background())
}
