//go:build race

package main

// raceEnabled: the tests run under the race detector (go test -race), about ten
// times slower; the long single-goroutine experiments skip there (CI runs them
// without -race).
const raceEnabled = true
