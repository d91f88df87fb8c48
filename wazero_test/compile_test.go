package wazero_test

import (
	"context"
	"os"
	"testing"

	"github.com/agentrt/agentrt/jshost"
)

// BenchmarkCompile measures compiling the module under wazero: cold (an
// empty compilation cache each time) and from a warm on-disk cache.
func BenchmarkCompile(b *testing.B) {
	if modulePath == "" {
		b.Skip(skipReason)
	}
	wasm, err := os.ReadFile(modulePath)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			m, err := jshost.Compile(ctx, wasm, &jshost.CompileOptions{CacheDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			m.Close(ctx)
		}
	})
	b.Run("cached", func(b *testing.B) {
		opts := &jshost.CompileOptions{CacheDir: b.TempDir()}
		m, err := jshost.Compile(ctx, wasm, opts) // fill the cache
		if err != nil {
			b.Fatal(err)
		}
		m.Close(ctx)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			m, err := jshost.Compile(ctx, wasm, opts)
			if err != nil {
				b.Fatal(err)
			}
			m.Close(ctx)
		}
	})
}

// BenchmarkColdStart measures a new instance of the compiled module until
// createRuntime answers and a first turn completes.
func BenchmarkColdStart(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		in := mustInstance(b, nil)
		rt := mustRuntime(b, in, "agentrt", nil)
		if _, err := in.CallAsync(ctx, rt, "startRun", "s", "hi"); err != nil {
			b.Fatal(err)
		}
		in.Close(ctx)
	}
}
