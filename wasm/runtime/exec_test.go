package main

import (
	"os"
	"os/exec"
)

// goCommand runs the go command in dir for GOOS=js GOARCH=wasm.
func goCommand(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	return cmd.CombinedOutput()
}
