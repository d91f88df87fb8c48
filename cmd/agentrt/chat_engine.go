package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
	"github.com/agentrt/agentrt/jshost"
	"github.com/agentrt/agentrt/openai"
	"github.com/agentrt/agentrt/wasihost"
)

// wireEngine runs chat's turns over the wire exports both modules share
// (docs/wire.md), driven by wasihost: the WASI module (--wasi) on its own
// wazero instance, and the GOOS=js module (the default) under jshost,
// which plays its JavaScript side and hands wasihost the module's
// exports (wasihost.AttachJS). Either way one driver runs every turn,
// the runtime's config, policy and history cross in the same frames and
// the module's rules answer; the model, when not the module's echo, is
// called in Go.
type wireEngine struct {
	rt    *wasihost.Runtime
	close func()
}

func newWireEngine(ctx context.Context, o chatOptions, model *openai.Model, stderr io.Writer) (*wireEngine, error) {
	in, closeModule, err := chatInstance(ctx, o, stderr)
	if err != nil {
		return nil, err
	}
	cfg := wasihost.Config{SystemPrompt: o.system}
	if model != nil {
		cfg.Model = model
	}
	rt, err := in.NewRuntime(cfg)
	if err != nil {
		closeModule()
		return nil, err
	}
	return &wireEngine{rt: rt, close: func() {
		rt.Close()
		closeModule()
	}}, nil
}

// chatInstance starts the module chat runs: the WASI module with --wasi,
// else the GOOS=js module under jshost. closeModule closes it and what
// compiled it.
func chatInstance(ctx context.Context, o chatOptions, stderr io.Writer) (in *wasihost.Instance, closeModule func(), err error) {
	if o.wasi {
		path, err := chatWASIModule(ctx, o.module)
		if err != nil {
			return nil, nil, err
		}
		m, err := wasihost.CompileFile(ctx, path, &wasihost.CompileOptions{Stderr: stderr})
		if err != nil {
			return nil, nil, err
		}
		if in, err = m.Instantiate(ctx); err != nil {
			m.Close(context.Background())
			return nil, nil, err
		}
		return in, func() { m.Close(context.Background()) }, nil
	}
	path, err := chatModule(ctx, o.module)
	if err != nil {
		return nil, nil, err
	}
	m, err := jshost.CompileFile(ctx, path, nil)
	if err != nil {
		return nil, nil, err
	}
	js, err := jshost.NewInstance(ctx, m, jshost.Config{Stdout: stderr, Stderr: stderr})
	if err != nil {
		m.Close(context.Background())
		return nil, nil, err
	}
	return wasihost.AttachJS(js.Exports(), js.Close), func() {
		js.Close(context.Background())
		m.Close(context.Background())
	}, nil
}

func (e *wireEngine) turn(ctx context.Context, session, input string, p core.Policy, h *historyFile) (*turnResult, error) {
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
