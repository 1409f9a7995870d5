package main

import (
	"fmt"
	"os"
	"testing"
)

// testRoot holds what tests share across the test binary (the demo sweep, the built
// binary); removed at the end.
var testRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "replay-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testRoot = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
