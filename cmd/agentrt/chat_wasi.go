package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/build"
	"github.com/agentrt/agentrt/openai"
	"github.com/agentrt/agentrt/wasihost"
)

// chatWASI is `agentrt chat --wasi`: the same terminal host as chat, on
// the WASI module driven by wasihost. The model, when not the module's
// echo, is called in Go; the module is sandboxed on plain wazero with no
// JavaScript world.
func chatWASI(ctx context.Context, o chatOptions, model *openai.Model, stdin io.Reader, stdout, stderr io.Writer) error {
	file, history, err := readHistory(o.history)
	if err != nil {
		return err
	}
	path, err := chatWASIModule(ctx, o.module)
	if err != nil {
		return err
	}
	m, err := wasihost.CompileFile(ctx, path, &wasihost.CompileOptions{Stderr: stderr})
	if err != nil {
		return err
	}
	defer m.Close(context.Background())
	in, err := m.Instantiate(ctx)
	if err != nil {
		return err
	}
	cfg := wasihost.Config{SystemPrompt: o.system}
	if model != nil {
		cfg.Model = model
	}
	rt, err := in.NewRuntime(cfg)
	if err != nil {
		return err
	}
	failed, turns := 0, 0
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		turns++
		res, err := rt.Run(ctx, core.RunRequest{SessionID: o.session, Input: line, WithHistory: true, History: history})
		if err != nil {
			if errors.Is(err, wasihost.ErrDead) || ctx.Err() != nil {
				return err
			}
			failed++
			fmt.Fprintf(stderr, "error: %s\n", coreTurnError(err))
			continue // a refused or failed turn is not stored; the next may succeed
		}
		fmt.Fprintf(stdout, "[seed mode=%s seeded=%d skippedSystem=%d]\n", res.Seed.Mode, res.Seed.Seeded, res.Seed.SkippedSystem)
		fmt.Fprintf(stdout, "assistant: %s\n", res.Reply.Content)
		history = append(history, core.SeedMessages(res.Appended)...)
		for _, msg := range res.Appended {
			file = append(file, historyEntry(&msg))
		}
		if err := writeHistory(o.history, file); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d turns failed (not stored in %s)", failed, turns, o.history)
	}
	return nil
}

// coreTurnError formats a refused or failed turn as turnError does for
// the GOOS=js module.
func coreTurnError(err error) string {
	e := core.AsError(err)
	return errorLine(e.Message, string(e.Code), e.Index)
}

// chatWASIModule returns the WASI module to run: path if given, else
// dist/agentrt-wasi.wasm of the repository, built first if missing.
func chatWASIModule(ctx context.Context, path string) (string, error) {
	return distModule(path, build.WasiModuleName, func(root, file string) error {
		return build.WasiModule(ctx, root, build.WasiPkg, file)
	})
}

// historyEntry is msg as the history file stores it.
func historyEntry(msg *core.Message) map[string]any {
	e := map[string]any{"role": string(msg.Role), "content": msg.Content}
	if msg.ID != "" {
		e["id"] = msg.ID
	}
	if msg.ToolCallID != "" {
		e["tool_call_id"] = msg.ToolCallID
	}
	if len(msg.ToolCalls) > 0 {
		calls := make([]any, len(msg.ToolCalls))
		for i, c := range msg.ToolCalls {
			calls[i] = map[string]any{"id": c.ID, "name": c.Name, "arguments": c.Arguments}
		}
		e["tool_calls"] = calls
	}
	return e
}
