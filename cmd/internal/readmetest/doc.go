// Package readmetest keeps README.md's printed examples true: each fenced block that
// starts with "$ go run ./cmd/NAME ..." lists commands (lines starting with "$ ") and
// the lines each printed; Check runs every command of the blocks of one program in a
// scratch directory laid out like the repository (testdata/ linked) and compares, or
// rewrites the blocks with -update. The commands' own tests call it.
package readmetest
