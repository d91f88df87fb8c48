package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// Ensure -h, --help and "help CMD" exit 0 for every command and print its
// flags, and that "help" alone lists the commands.
func TestRun_Help(t *testing.T) {
	if len(commands) < 5 {
		t.Fatalf("only %d commands registered", len(commands))
	}
	for name := range commands {
		for _, args := range [][]string{{name, "-h"}, {name, "--help"}, {"help", name}} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				var stderr bytes.Buffer
				if code := run(context.Background(), args, &stderr); code != 0 {
					t.Fatalf("exit code: got %d, want 0; stderr %q", code, stderr.String())
				}
			})
		}
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"help"}, &stderr); code != 0 || !strings.Contains(stderr.String(), "demo") {
		t.Fatalf("help: code %d, output %q", code, stderr.String())
	}
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
			var stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stderr)
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
