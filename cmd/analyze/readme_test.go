package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
)

// Every flag of analyze is in the README.
func TestReadmeListsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
	root.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" {
			return
		}
		if !bytes.Contains(readme, []byte("`--"+f.Name)) && !bytes.Contains(readme, []byte(", `--"+f.Name)) ||
			(f.Shorthand != "" && !bytes.Contains(readme, []byte("`-"+f.Shorthand))) {
			t.Errorf("README does not list analyze's flag --%s (-%s)", f.Name, f.Shorthand)
		}
	})
}
