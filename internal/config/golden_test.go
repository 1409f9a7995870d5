package config

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/default.yaml")

// TestDefaultGolden pins the printed defaults (what `replay config --defaults` shows)
// against testdata/default.yaml; run with -update after a deliberate change.
func TestDefaultGolden(t *testing.T) {
	c := Default()
	out, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "default.yaml")
	if *update {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestDefaultGolden -update)", err)
	}
	if string(out) != string(want) {
		t.Fatalf("default YAML differs from %s:\n%s", golden, out)
	}
	back, _, err := Load(golden, nil)
	if err != nil || !reflect.DeepEqual(*back, c) {
		t.Fatalf("Load(%s) = %+v, %v; want the defaults", golden, back, err)
	}
}

// TestEveryAttributeDocumented keeps the YAML comments in step with the structs.
func TestEveryAttributeDocumented(t *testing.T) {
	known := map[string]bool{}
	for _, p := range allPaths {
		known[p.String()] = true
		if _, ok := attrDocs[p.String()]; !ok {
			t.Errorf("attribute %s has no entry in attrDocs", p)
		}
	}
	for p := range attrDocs {
		if !known[p] {
			t.Errorf("attrDocs has %s, which is no attribute", p)
		}
	}
}
