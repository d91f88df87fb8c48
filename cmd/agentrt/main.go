// Command agentrt builds the agentrt WebAssembly module and runs its hosts:
//
//	agentrt build            write dist/: the npm package (module, wasm_exec.js, glue)
//	agentrt pack             build dist/ and pack it into an npm tarball
//	agentrt demo             build and serve the web demo
//	agentrt chat             chat in the terminal on the module, under wazero (turns from stdin)
//	agentrt worker           run the Cloudflare Worker locally under workerd
//
// Run "agentrt help COMMAND" (or "agentrt COMMAND --help") for the flags
// of a command. Help asked for ("agentrt --help", "agentrt help", "agentrt
// COMMAND -h") goes to stdout and exits 0. Every command exits 0 on
// success, 2 for a usage error (no command at all, an unknown one, a bad
// flag, a required flag left out, flags that do not go together: the
// usage goes to stderr), and 1 with one line "agentrt COMMAND:
// message" on stderr when it fails.
//
// The binary carries no module: chat and worker find the modules next to
// it, in a dist/ beside it, or in the checkout holding the working
// directory or the binary (modules.go), so a binary built with
// `go build ./cmd/agentrt` runs them from any folder (docs/cli.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand. Each lives in its own file and registers
// itself in an init function.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string) error
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// errUsage is returned by a command whose flags were wrong, after the flag
// package printed what was wrong and the usage.
var errUsage = errors.New("usage error")

// The streams of the command line being run: run sets them, parseFlags
// prints a command's usage to helpOut when help was asked for, and its
// flag errors to errOut.
var (
	helpOut io.Writer = os.Stdout
	errOut  io.Writer = os.Stderr
)

// parseFlags parses args into fs: flag.ErrHelp for -h, errUsage for bad
// flags (both already reported by fs: the usage asked for on helpOut, what
// was wrong on errOut), or an error naming stray arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(errOut)
	if asksHelp(args) {
		fs.SetOutput(helpOut)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments: %q\n", fs.Args())
		fs.Usage()
		return errUsage
	}
	return nil
}

// usageError reports msg and the usage of fs on errOut and returns
// errUsage: flags that parse but do not go together, or a required flag
// left out (exit code 2).
func usageError(fs *flag.FlagSet, msg string) error {
	fs.SetOutput(errOut)
	fmt.Fprintf(errOut, "agentrt %s: %s\n", fs.Name(), msg)
	fs.Usage()
	return errUsage
}

// asksHelp reports whether the flags of args, up to the first argument
// that is not one or "--", ask for help.
func asksHelp(args []string) bool {
	for _, a := range args {
		switch {
		case isHelp(a):
			return true
		case a == "--" || len(a) < 2 || a[0] != '-':
			return false
		}
	}
	return false
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "--h" || arg == "-help" || arg == "--help"
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the command line args and returns the exit code. Usage asked
// for goes to stdout; errors, and the usage shown with them, to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	helpOut, errOut = stdout, stderr
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if isHelp(args[0]) {
		usage(stdout)
		return 0
	}
	if args[0] == "help" {
		if len(args) == 1 {
			usage(stdout)
			return 0
		}
		// "help CMD" is "CMD -h".
		args = []string{args[1], "-h"}
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "agentrt: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := c.run(ctx, args[1:])
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "agentrt %s: %v\n", c.name, err)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: agentrt <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun \"agentrt help <command>\" or \"agentrt <command> --help\" for its flags.")
}
