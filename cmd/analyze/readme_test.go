package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/tracefabric/tracefabric/records/export"
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

// The summary line counts in the singular for one (issue 13: "1 figure").
func TestSummaryPlurals(t *testing.T) {
	var b bytes.Buffer
	printSummary(&b, "out/x/analysis", &result{figures: []string{"delay_cdf"}, tables: []string{"a", "b"}}, export.CSV)
	if got, want := b.String(), "wrote out/x/analysis: report.html, report.md, summary.json, 1 figure (plots/*.png, *.svg), 2 tables (tables/*.csv)\n"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// analyze --version names the tool version, like replay's.
func TestVersionFlag(t *testing.T) {
	code, out, errs := runCmd("--version")
	if code != exitOK || errs != "" || !bytes.HasPrefix([]byte(out), []byte("analyze "+version+" ")) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
