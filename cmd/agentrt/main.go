// Command agentrt builds the agentrt WebAssembly module and runs its hosts:
//
//	agentrt build            write dist/: the npm package (module, wasm_exec.js, glue)
//	agentrt pack             build dist/ and pack it into an npm tarball
//	agentrt demo             build and serve the web demo
//	agentrt chat             chat in the terminal on the module, under wazero
//	agentrt worker           run the Cloudflare Worker locally under workerd
//
// Run "agentrt help COMMAND" (or "agentrt COMMAND -h") for the flags of a
// command. Every command exits 0 on success and for -h, 2 for a usage
// error, and 1 with one line "agentrt COMMAND: message" on stderr when it
// fails.
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

// parseFlags parses args into fs: flag.ErrHelp for -h, errUsage for bad
// flags (both already reported by fs), or an error naming stray
// arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the command line args and returns the exit code.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		usage(stderr)
		return 0
	}
	if args[0] == "help" {
		if len(args) == 1 {
			usage(stderr)
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
	fmt.Fprintln(w, "\nRun \"agentrt help <command>\" for its flags.")
}
