package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tracefabric/tracefabric/internal/tracegen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", filepath.Join("testdata", "pcaps"), "directory of the committed traces")
	vdir := flag.String("validation-dir", filepath.Join("testdata", "validation"), "directory of the committed validation traces (docs/validation.md)")
	bench := flag.Int("bench", 0, "write one benchmark trace of this many packets to -o instead")
	out := flag.String("o", "", "output file for -bench (written atomically; - for stdout)")
	seed := flag.Uint64("seed", 1, "seed of the -bench trace")
	only := flag.String("only", "", "restrict the -bench trace to one class: tcp or roce (closed-loop benchmarks)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *bench > 0 {
		if *out == "" {
			return errors.New("-bench needs -o FILE")
		}
		b := tracegen.Benchmark{Packets: *bench, Seed: *seed, Only: *only}
		if *out == "-" {
			_, err := tracegen.WriteBenchmark(os.Stdout, b)
			return err
		}
		st, err := tracegen.WriteBenchmarkFile(*out, b)
		if err != nil {
			return err
		}
		report(*out, st)
		return nil
	}
	for _, set := range []struct {
		dir, flag string
		scenarios []*tracegen.Scenario
	}{{*dir, "-dir", append(tracegen.Committed(), tracegen.Captures()...)}, {*vdir, "-validation-dir", tracegen.Validation()}} {
		if fi, err := os.Stat(set.dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s is not a directory: run from the repository root or pass %s", set.dir, set.flag)
		}
		for _, s := range set.scenarios {
			path := filepath.Join(set.dir, s.Name)
			st, err := s.WriteFile(path)
			if err != nil {
				return err
			}
			report(path, st)
		}
	}
	return nil
}

func report(path string, st tracegen.Stats) {
	size := int64(-1)
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	fmt.Printf("%s: %d packets (%d IPv6), %d flows, %d bytes (IP lengths), %s .. %s, file %d bytes\n",
		path, st.Packets, st.IPv6, st.Flows, st.Bytes, st.First.Format("15:04:05.000000000"),
		st.Last.Format("15:04:05.000000000"), size)
}
