package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/internal/synth"
)

// BenchmarkAnalyze times the whole command (load, analyze, draw, write) on synthetic
// runs of the default Clos with N flows, N PFC events (pause chains of depth 5) and
// N/10 drops, for N = 250k, 500k and 1M: the time per op should double with N.
// Peak RSS: build the command and synthgen, then /usr/bin/time -v (see the README's
// analyze section).
func BenchmarkAnalyze(b *testing.B) {
	for _, n := range []int{250_000, 500_000, 1_000_000} {
		b.Run(fmt.Sprintf("flows=pfc=%dk", n/1000), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "run")
			if _, err := synth.Write(dir, synth.Size{Flows: n, PFCEvents: n, Drops: n / 10}, 1); err != nil {
				b.Fatal(err)
			}
			out := filepath.Join(b.TempDir(), "analysis")
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if code, _, stderr := runCmd(dir, "-q", "-o", out); code != exitOK {
					b.Fatalf("exit %d: %s", code, stderr)
				}
			}
			b.ReportMetric(float64(2*n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
