package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
	"github.com/agentrt/agentrt/internal/build"
	"github.com/agentrt/agentrt/internal/envvar"
	"github.com/agentrt/agentrt/jshost"
	"github.com/agentrt/agentrt/openai"
	"github.com/agentrt/agentrt/wire"
)

func init() {
	register(command{name: "chat", summary: "chat in the terminal on the module, under wazero; history in a JSON file", run: runChat})
}

// The environment variables of the chat command's model, the same as the
// worker's.
const (
	envModel         = envvar.Model         // "echo" (default) or "openai"
	envOpenAIBaseURL = envvar.OpenAIBaseURL // e.g. https://api.openai.com/v1
	envOpenAIModel   = envvar.OpenAIModel   // model name sent upstream
	envOpenAIKey     = envvar.OpenAIKey     // secret: never a flag
)

// chatOptions are the chat command's flags.
type chatOptions struct {
	session, history, system, module string
	model, baseURL, modelName        string
	wasi                             bool // run agentrt-wasi.wasm with wasihost
}

// runChat is `agentrt chat`: a terminal host for the module. It reads one
// turn per input line, runs it with the history file as the host's
// history, prints the seed outcome and the reply, and appends the
// completed turn to the file. A new process starts cold and seeds its
// session from the file.
func runChat(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	var o chatOptions
	fs.StringVar(&o.session, "session", "", "session (conversation) id (required)")
	fs.StringVar(&o.history, "history", "", "JSON file holding the conversation (required; created if missing): an array of messages\n"+
		`{"role","content","tool_call_id"?,"tool_calls"?:[{"id","name","arguments"}],"id"?}, see docs/cli.md`)
	fs.StringVar(&o.system, "system", "", "system prompt")
	fs.StringVar(&o.module, "module", "", "the module to run (default: dist/agentrt.wasm, built first if missing)")
	fs.StringVar(&o.model, "model", envOr(envModel, "echo"), `"echo" (built in, no network) or "openai" ($`+envModel+`)`)
	fs.StringVar(&o.baseURL, "openai-base-url", os.Getenv(envOpenAIBaseURL), "OpenAI-compatible API root ($"+envOpenAIBaseURL+"); the key is read from $"+envOpenAIKey)
	fs.StringVar(&o.modelName, "openai-model", os.Getenv(envOpenAIModel), "model name sent upstream ($"+envOpenAIModel+")")
	fs.BoolVar(&o.wasi, "wasi", false, "run the WASI module (dist/agentrt-wasi.wasm) on plain wazero, the model in Go, instead of agentrt.wasm under jshost")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.session == "" || o.history == "" {
		return errors.New("--session and --history are required")
	}
	return chat(ctx, o, os.Stdin, os.Stdout, os.Stderr)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func chat(ctx context.Context, o chatOptions, stdin io.Reader, stdout, stderr io.Writer) error {
	history, seed, err := readHistory(o.history)
	if err != nil {
		return err
	}
	var model *openai.Model
	switch o.model {
	case "echo", "":
	case "openai":
		if o.baseURL == "" || o.modelName == "" {
			return errors.New("--model openai needs --openai-base-url and --openai-model")
		}
		model = &openai.Model{BaseURL: o.baseURL, Model: o.modelName, Key: os.Getenv(envOpenAIKey),
			Client: &http.Client{Timeout: 5 * time.Minute}}
	default:
		return fmt.Errorf("unknown --model %q: want echo or openai", o.model)
	}
	if o.wasi {
		return chatWASI(ctx, o, model, stdin, stdout, stderr)
	}
	path, err := chatModule(ctx, o.module)
	if err != nil {
		return err
	}
	m, err := jshost.CompileFile(ctx, path, nil)
	if err != nil {
		return err
	}
	defer m.Close(context.Background())
	in, err := jshost.NewInstance(ctx, m, jshost.Config{Stdout: stderr, Stderr: stderr})
	if err != nil {
		return err
	}
	defer in.Close(context.Background())

	config := map[string]any{"systemPrompt": o.system}
	if model != nil {
		config["model"] = hostModel(ctx, in, model)
	}
	api := in.Global("agentrt")
	if api == jshost.Undefined {
		return errors.New("the module did not publish globalThis.agentrt")
	}
	rt, err := in.Call(ctx, api, "createRuntime", config)
	if err != nil {
		return err
	}
	if e, ok := rt.(*jshost.Object); ok && e.IsError() { // a refused config
		x, _ := in.Export(e).(map[string]any)
		return fmt.Errorf("createRuntime: %v: %v", x["code"], x["message"])
	}

	interactive := false
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			interactive = true
		}
	}
	failed, turns := 0, 0
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for {
		if interactive {
			fmt.Fprint(stdout, "> ")
		}
		if !sc.Scan() {
			break
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		turns++
		// The history goes packed: read once by hostmsg, as every edge
		// reads it, instead of converted to JavaScript objects per turn.
		v, err := in.CallAsync(ctx, rt, "startRunWithHistory", o.session, line, &jshost.Uint8Array{Bytes: wire.EncodeHistory(seed)})
		if err != nil {
			var ex *jshost.Exception
			if errors.As(err, &ex) {
				failed++
				fmt.Fprintf(stderr, "error: %s\n", turnError(ex))
				continue // a refused or failed turn is not stored; the next may succeed
			}
			return err // the module ended, or ctx is done
		}
		res, _ := in.Export(v).(map[string]any)
		report, _ := res["seed"].(map[string]any)
		fmt.Fprintf(stdout, "[seed mode=%v seeded=%v skippedSystem=%v]\n", report["mode"], report["seeded"], report["skippedSystem"])
		reply, _ := res["reply"].(map[string]any)
		fmt.Fprintf(stdout, "assistant: %v\n", reply["content"])
		appended, _ := res["appended"].([]any)
		more, err := seedMessages(appended)
		if err != nil {
			return fmt.Errorf("the module's appended messages: %v", err)
		}
		history, seed = append(history, appended...), append(seed, more...)
		if err := writeHistory(o.history, history); err != nil {
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

// turnError formats a refused or failed turn as one line: the message,
// then " [code]" and " (index N)" when the error has them. The error's
// name ("Error") is left out: the line already says it is one.
func turnError(ex *jshost.Exception) string {
	s := ex.Message
	if s == "" {
		s = ex.Name
	}
	return errorLine(s, ex.Code, ex.Index)
}

// errorLine is message, then " [code]" when there is a code and
// " (index N)" when index is not negative: how chat prints a refused or
// failed turn on either module.
func errorLine(message, code string, index int) string {
	if code != "" {
		message += " [" + code + "]"
	}
	if index >= 0 {
		message += fmt.Sprintf(" (index %d)", index)
	}
	return message
}

// chatModule returns the module to run: path if given, else
// dist/agentrt.wasm of the repository, built first if it is missing.
func chatModule(ctx context.Context, path string) (string, error) {
	return distModule(path, "agentrt.wasm", func(string, string) error {
		_, err := buildDist(ctx, "dist")
		return err
	})
}

// distModule returns path if given, else the file name in the
// repository's dist/, made by makeIt(root, file) first if it is missing.
func distModule(path, name string, makeIt func(root, file string) error) (string, error) {
	if path != "" {
		return path, nil
	}
	root, err := build.Root()
	if err != nil {
		return "", fmt.Errorf("%v: pass --module", err)
	}
	p := filepath.Join(root, "dist", name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if err := makeIt(root, p); err != nil {
		return "", err
	}
	return p, nil
}

// readHistory reads the history file: a JSON array of messages in any
// shape of docs/contract.md. It returns the file's messages as they are
// (written back with each new turn) and the messages they seed, read by
// hostmsg; a message of the wrong shape fails with its index. A missing
// file is an empty history.
func readHistory(path string) ([]any, []core.SeedMessage, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return []any{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var h []any
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, nil, fmt.Errorf("%s: not a JSON array of messages: %v", path, err)
	}
	if h == nil {
		h = []any{}
	}
	v, err := hostjson.Parse(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	seed, err := hostmsg.Messages(v, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	return h, seed, nil
}

// seedMessages reads messages the module returned (a result's appended)
// as history, by the same rules.
func seedMessages(msgs []any) ([]core.SeedMessage, error) {
	b, err := json.Marshal(msgs)
	if err != nil {
		return nil, err
	}
	v, err := hostjson.Parse(b)
	if err != nil {
		return nil, err
	}
	return hostmsg.Messages(v, 0)
}

// writeHistory replaces the history file atomically.
func writeHistory(path string, h []any) error {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// hostModel exposes m to the module as a JavaScript model function: the
// request is converted on the event loop, the HTTP call runs in its own
// goroutine, and the answer settles a Promise.
func hostModel(ctx context.Context, in *jshost.Instance, m core.Model) jshost.Func {
	return func(_ jshost.Value, args []jshost.Value) (any, error) {
		req := modelRequest(args)
		p, resolve, reject := in.NewPromise()
		go func() {
			reply, err := m.Complete(ctx, req)
			if err != nil {
				v, _ := jshost.ToJS(err)
				if e, ok := v.(*jshost.Object); ok {
					e.Set("code", string(core.ErrorCode(err)))
				}
				reject(v)
				return
			}
			calls := make([]any, len(reply.ToolCalls))
			for i, c := range reply.ToolCalls {
				calls[i] = map[string]any{"id": c.ID, "name": c.Name, "arguments": c.Arguments}
			}
			resolve(map[string]any{"content": reply.Content, "toolCalls": calls})
		}()
		return p, nil
	}
}

// modelRequest reads the module's model request (docs/contract.md,
// "Models and tools").
func modelRequest(args []jshost.Value) *core.ModelRequest {
	var r jshost.Value = jshost.Undefined
	if len(args) > 0 {
		r = args[0]
	}
	str := func(v jshost.Value) string { s, _ := v.(string); return s }
	req := &core.ModelRequest{
		RunID:     str(jshost.Get(r, "runId")),
		SessionID: str(jshost.Get(r, "sessionId")),
		System:    str(jshost.Get(r, "system")),
		Delta:     func(string) {},
	}
	msgs, _ := jshost.Export(jshost.Get(r, "messages")).([]any)
	for _, x := range msgs {
		mm, _ := x.(map[string]any)
		msg := core.Message{
			ID: str(mm["id"]), Role: core.Role(str(mm["role"])),
			Content: str(mm["content"]), ToolCallID: str(mm["tool_call_id"]),
		}
		calls, _ := mm["tool_calls"].([]any)
		for _, c := range calls {
			cm, _ := c.(map[string]any)
			msg.ToolCalls = append(msg.ToolCalls, core.ToolCall{ID: str(cm["id"]), Name: str(cm["name"]), Arguments: str(cm["arguments"])})
		}
		req.Messages = append(req.Messages, msg)
	}
	tools, _ := jshost.Export(jshost.Get(r, "tools")).([]any)
	for _, x := range tools {
		tm, _ := x.(map[string]any)
		req.Tools = append(req.Tools, core.ToolSpec{Name: str(tm["name"]), Description: str(tm["description"]), Parameters: str(tm["parameters"])})
	}
	return req
}
