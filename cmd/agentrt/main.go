// Command agentrt builds the agentrt WebAssembly module and runs its hosts:
//
//	agentrt build            write dist/ (module, wasm_exec.js, glue.js)
//	agentrt demo             build and serve the web demo
//	agentrt chat             chat in the terminal on the module, under wazero
//	agentrt worker           run the Cloudflare Worker locally under workerd
//
// Run "agentrt help" for the flags of each command.
package main

import (
	"context"
	"fmt"
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

func main() {
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "-h" || os.Args[1] == "--help" {
		usage()
		return
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "agentrt: unknown command %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := c.run(ctx, os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "agentrt %s: %v\n", c.name, err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: agentrt <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-8s %s\n", n, commands[n].summary)
	}
}
