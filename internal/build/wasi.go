package build

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
)

// WasiPkg is the package of the module for WASI hosts, and WasiModuleName
// the name Build gives it in dist/.
const (
	WasiPkg        = "./wasm/wasi"
	WasiModuleName = "agentrt-wasi.wasm"
)

// WasiModule compiles the main package pkg (relative to root) for
// GOOS=wasip1 GOARCH=wasm as a reactor (-buildmode=c-shared) into out,
// stripped and with trimmed paths, with Tags(pkg).
func WasiModule(ctx context.Context, root, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-tags="+Tags(pkg), "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build: go build %s: %v\n%s", pkg, err, stderr.String())
	}
	return nil
}
