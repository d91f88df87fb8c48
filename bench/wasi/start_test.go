package wasi_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/agentrt/agentrt/internal/build"
	"github.com/agentrt/agentrt/wasihost"
)

// BenchmarkWASIStart times a new instance of each build of the WASI
// module under wazero, from the compiled module to a created runtime:
// Instantiate (the plain build's _initialize included) and NewRuntime.
// The two builds alternate over the rounds (AGENTRT_BENCH_ROUNDS, at
// least 20); it prints the medians and minimums and their ratios.
func BenchmarkWASIStart(b *testing.B) {
	m := mustModules(b)
	plain, err := wasihost.CompileFile(ctx, filepath.Join(filepath.Dir(m.wasi), build.WasiPlainModuleName), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close(ctx)
	rounds := 20
	if n, err := strconv.Atoi(os.Getenv("AGENTRT_BENCH_ROUNDS")); err == nil && n > rounds {
		rounds = n
	}
	builds := []struct {
		name string
		mod  *wasihost.Module
		ms   []float64
	}{{"pre-initialized (agentrt-wasi.wasm)", m.wasiMod, nil}, {"plain (agentrt-wasi-plain.wasm)", plain, nil}}
	for r := 0; r < rounds+2; r++ {
		for k := range builds {
			x := &builds[(r+k)%len(builds)]
			t := time.Now()
			in, err := x.mod.Instantiate(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := in.NewRuntime(wasihost.Config{}); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t)
			in.Close(ctx)
			if r >= 2 {
				x.ms = append(x.ms, float64(d.Microseconds())/1000)
			}
		}
	}
	med := func(xs []float64) float64 { sort.Float64s(xs); return xs[len(xs)/2] }
	fmt.Fprintf(os.Stderr, "\nWASI module start under wazero, compiled module to a created runtime (%d rounds, builds alternating; the minimum is the least disturbed by other work)\n", rounds)
	for _, x := range builds {
		fmt.Fprintf(os.Stderr, "  %-38s median %.2f ms, min %.2f ms\n", x.name, med(x.ms), x.ms[0])
	}
	fmt.Fprintf(os.Stderr, "  pre-initialized / plain: median %.2fx, min %.2fx\n", med(builds[0].ms)/med(builds[1].ms), builds[0].ms[0]/builds[1].ms[0])
}
