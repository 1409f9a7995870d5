package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tracefabric/tracefabric/internal/synth"
)

func main() {
	var sz synth.Size
	out := flag.String("o", "", "output run directory")
	flag.IntVar(&sz.Flows, "flows", 1_000_000, "flows.arrow rows")
	flag.IntVar(&sz.PFCEvents, "pfc", 1_000_000, "pfc.arrow rows (whole chains of 20)")
	flag.IntVar(&sz.Drops, "drops", 100_000, "drops.arrow rows")
	seed := flag.Uint64("seed", 1, "PCG seed")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "generate: -o DIR is required")
		os.Exit(2)
	}
	run, err := synth.Write(*out, sz, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %v\n", *out, run.Records)
}
