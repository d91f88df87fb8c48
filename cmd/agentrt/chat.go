package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/envvar"
	"github.com/agentrt/agentrt/openai"
)

func init() {
	register(command{name: "chat", summary: "chat in the terminal on the module, under wazero: turns from stdin, history in a JSON file", run: runChat})
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
	wasi                             bool   // run agentrt-wasi.wasm with wasihost
	repair                           bool   // policy.repair
	seedMode                         string // policy.seedMode: "if-empty" or "reconcile"
}

// chatUsage is the chat command's usage, before its flags.
const chatUsage = `usage: agentrt chat --session ID --history FILE [flags] < TURNS

Reads standard input one line at a time: each non-empty line is the user's
input of one turn (typed at a "> " prompt in a terminal, or piped; the
command ends at the end of input, Ctrl-D in a terminal). Each turn runs
with FILE as the host's history (read again before each turn); the seed
outcome and the reply are printed, and the turn's messages are appended
to FILE. A refused or failed
turn prints "error: MESSAGE [code] (index N)" on stderr and is not stored;
the command then exits 1 (docs/cli.md).

Flags:
`

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
		`{"role","content","tool_call_id"?,"tool_calls"?:[{"id","name","arguments"}],"id"?} or any shape of docs/contract.md, see docs/cli.md`)
	fs.StringVar(&o.system, "system", "", "system prompt")
	fs.StringVar(&o.module, "module", "", "the module to run (default: agentrt.wasm, or agentrt-wasi.wasm with --wasi, next to the binary,\nin dist/ next to it, or in the repository's dist/, built first if missing)")
	fs.StringVar(&o.model, "model", envOr(envModel, "echo"), `"echo" (built in, no network) or "openai" ($`+envModel+`)`)
	fs.StringVar(&o.baseURL, "openai-base-url", os.Getenv(envOpenAIBaseURL), "OpenAI-compatible API root ($"+envOpenAIBaseURL+"); the key is read from $"+envOpenAIKey)
	fs.StringVar(&o.modelName, "openai-model", os.Getenv(envOpenAIModel), "model name sent upstream ($"+envOpenAIModel+")")
	fs.BoolVar(&o.wasi, "wasi", false, "run the WASI module (agentrt-wasi.wasm) on plain wazero, the model in Go, instead of agentrt.wasm under jshost")
	fs.BoolVar(&o.repair, "repair", false, "policy.repair: repair a history with an unanswered tool call, an orphan or twice-stored result or a\nrepeated message instead of refusing it; the file is rewritten healed (docs/adr/0013)")
	fs.StringVar(&o.seedMode, "seed-mode", "if-empty", `policy.seedMode: "if-empty" (seed an empty session only) or "reconcile" (also bring a warm session up to date)`)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), chatUsage)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.session == "" || o.history == "" {
		return usageError(fs, "--session and --history are required")
	}
	switch core.SeedMode(o.seedMode) {
	case core.SeedIfEmpty, core.SeedReconcile:
	default:
		return usageError(fs, fmt.Sprintf("--seed-mode %q: want if-empty or reconcile", o.seedMode))
	}
	return chat(ctx, o, os.Stdin, os.Stdout, os.Stderr)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// turnResult is what the loop needs of a completed turn.
type turnResult struct {
	seed     core.SeedReport
	reply    string
	appended []core.SeedMessage
	// repaired is the host's history healed by the seed's repairs
	// (seed.repaired), in the file's shapes; nil when nothing was
	// repaired.
	repaired []any
}

// turnError is a refused or failed turn, as one line.
type turnError struct{ line string }

func (e *turnError) Error() string { return e.line }

func chat(ctx context.Context, o chatOptions, stdin io.Reader, stdout, stderr io.Writer) error {
	h, err := readHistory(o.history)
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
	e, err := newWireEngine(ctx, o, model, stderr)
	if err != nil {
		return err
	}
	defer e.close()
	policy := core.Policy{Repair: o.repair, SeedMode: core.SeedMode(o.seedMode)}
	if policy.SeedMode == "" {
		policy.SeedMode = core.SeedIfEmpty
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
		// The file is read again for every turn: another process may
		// have added turns to it (what --seed-mode reconcile is for).
		if h, err = readHistory(o.history); err != nil {
			return err
		}
		res, err := e.turn(ctx, o.session, line, policy, h)
		if err != nil {
			var te *turnError
			if errors.As(err, &te) {
				failed++
				fmt.Fprintf(stderr, "error: %s\n", te.line)
				continue // a refused or failed turn is not stored; the next may succeed
			}
			return err // the module ended, or ctx is done
		}
		fmt.Fprintf(stdout, "[seed mode=%s seeded=%d skippedSystem=%d%s]\n", res.seed.Mode, res.seed.Seeded, res.seed.SkippedSystem, repairsText(res.seed.Repairs))
		fmt.Fprintf(stdout, "assistant: %s\n", res.reply)
		if res.repaired != nil {
			if err := h.heal(res.repaired); err != nil {
				return fmt.Errorf("the healed history: %v", err)
			}
		}
		if err := h.append(res.appended); err != nil {
			return err
		}
		if err := h.write(); err != nil {
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

// repairsText is the seed line's account of repairs: "" when there were
// none, else " repairs=KIND@INDEX,...".
func repairsText(repairs []core.Repair) string {
	if len(repairs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(" repairs=")
	for i, r := range repairs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s@%d", r.Kind, r.Index)
	}
	return b.String()
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
