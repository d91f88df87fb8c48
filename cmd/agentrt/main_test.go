package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// Ensure help asked for goes to stdout with exit code 0, for the whole
// command and for every subcommand in each spelling, and that no arguments
// at all is a usage error with the usage on stderr.
func TestRun_Help(t *testing.T) {
	if len(commands) < 5 {
		t.Fatalf("only %d commands registered", len(commands))
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // in stdout; stderr must be empty
		stderr string // in stderr; stdout must be empty
	}{
		{name: "OK--help", args: []string{"--help"}, stdout: "commands:"},
		{name: "OK-h", args: []string{"-h"}, stdout: "commands:"},
		{name: "OKhelp", args: []string{"help"}, stdout: "commands:"},
		{name: "ErrNoArgs", args: nil, code: 2, stderr: "commands:"},
		{name: "ErrHelpUnknown", args: []string{"help", "nope"}, code: 2, stderr: `unknown command "nope"`},
		{name: "ErrUnknownFlag", args: []string{"build", "-nope"}, code: 2, stderr: "-out"},
	}
	for name := range commands {
		for _, args := range [][]string{{name, "-h"}, {name, "--help"}, {name, "-help"}, {"help", name}} {
			tests = append(tests, struct {
				name   string
				args   []string
				code   int
				stdout string
				stderr string
			}{name: "OK" + strings.Join(args, " "), args: args, stdout: usageHead(name)})
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit code: got %d, want %d; stdout %q, stderr %q", code, tc.code, stdout.String(), stderr.String())
			}
			out, quiet := &stdout, &stderr
			want := tc.stdout
			if tc.stderr != "" {
				out, quiet, want = &stderr, &stdout, tc.stderr
			}
			if !strings.Contains(out.String(), want) {
				t.Fatalf("output: got %q, want it to contain %q", out.String(), want)
			}
			if quiet.Len() != 0 {
				t.Fatalf("the other stream: got %q, want nothing", quiet.String())
			}
		})
	}
}

// usageHead is how the usage of the command name begins.
func usageHead(name string) string {
	if name == "chat" {
		return "usage: agentrt chat"
	}
	return "Usage of " + name
}

func TestRun_Errors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		// Ensure an unknown command is a usage error.
		{name: "ErrUnknownCommand", args: []string{"nope"}, code: 2, want: `unknown command "nope"`},
		// Ensure an unknown flag is a usage error, reported once by the flag package.
		{name: "ErrUnknownFlag", args: []string{"build", "-nope"}, code: 2},
		// Ensure stray arguments are a usage error.
		{name: "ErrStrayArgs", args: []string{"demo", "extra"}, code: 2},
		// Ensure a busy port is reported first and clearly, before any build.
		{name: "ErrDemoBusyPort", args: []string{"demo", "-no-build", "-addr", addr}, code: 1, want: "agentrt demo: port busy: " + addr + " is already in use"},
		{name: "ErrWorkerBusyPort", args: []string{"worker", "-addr", addr}, code: 1, want: "agentrt worker: port busy: " + addr + " is already in use"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit code: got %d, want %d; stderr %q", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("stderr: got %q, want it to contain %q", stderr.String(), tc.want)
			}
			if strings.Count(stderr.String(), "agentrt ") > 1 && tc.code == 1 {
				t.Fatalf("stderr has more than one message: %q", stderr.String())
			}
		})
	}
}
