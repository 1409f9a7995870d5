package records

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
)

// docType is how docs/records.md spells a column's type.
func docType(f arrow.Field) string {
	t := f.Type.String()
	switch f.Type.ID() {
	case arrow.DICTIONARY:
		t = "dictionary<int32, utf8>"
	case arrow.STRING:
		t = "utf8"
	}
	if f.Nullable {
		t += " (nullable)"
	}
	return t
}

// TestDocsMatchSchemas: docs/records.md lists exactly each file's columns, in order,
// with their types, and exactly the enumerations' values.
func TestDocsMatchSchemas(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "records.md"))
	if err != nil {
		t.Fatal(err)
	}
	heading := regexp.MustCompile("^### `([a-z]+\\.arrow)`")
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\| ([^|]+?) \\|")
	documented := map[string][]string{}
	var file string
	for _, line := range strings.Split(string(data), "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			file = m[1]
			documented[file] = []string{}
		} else if strings.HasPrefix(line, "## ") {
			file = ""
		} else if m := row.FindStringSubmatch(line); m != nil && file != "" {
			documented[file] = append(documented[file], m[1]+" "+m[2])
		}
	}
	for _, name := range Files() {
		s, _ := Schema(name)
		var want []string
		for _, f := range s.Fields() {
			want = append(want, f.Name+" "+docType(f))
		}
		if got, ok := documented[name]; !ok {
			t.Errorf("docs/records.md has no section for %s", name)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("docs/records.md %s columns:\n got %q\nwant %q", name, got, want)
		}
		delete(documented, name)
	}
	for name := range documented {
		t.Errorf("docs/records.md documents %s, which is not a record file", name)
	}

	for column, names := range map[string][]string{"reason": reasonNames[:], "event": pfcEventNames[:],
		"tier": tierNames[:], "fate": fateNames[:], "hash_method": hashMethodNames[:], "family": familyNames} {
		enumRow := regexp.MustCompile("^\\| [a-zA-Z ]+\\(`" + column + "`\\) \\| ([^|]+) \\|")
		found := false
		for _, line := range strings.Split(string(data), "\n") {
			if m := enumRow.FindStringSubmatch(line); m != nil {
				found = true
				want := "`" + strings.Join(names, "`, `") + "`"
				if m[1] != want {
					t.Errorf("enumeration %s documented as %s, want %s", column, m[1], want)
				}
			}
		}
		if !found {
			t.Errorf("enumeration %s not documented", column)
		}
	}
}

// loadbalance.arrow's moved_in and moved_out count moves (a flow that moves twice
// counts twice, as ecmp.Record counts them), and docs/records.md says so: their unit
// is "moves", not "flows".
func TestDocsMovedCountsMoves(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "records.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(moved_in|moved_out)` \\| [^|]+ \\| ([^|]+) \\| ([^|]+) \\|")
	found := 0
	for _, line := range strings.Split(string(data), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		found++
		if unit := strings.TrimSpace(m[2]); unit != "moves" {
			t.Errorf("%s: unit %q, want \"moves\"", m[1], unit)
		}
		if meaning := m[3]; strings.Contains(meaning, "flows moved") {
			t.Errorf("%s: %q says flows where the column counts moves", m[1], meaning)
		}
	}
	if found != 2 {
		t.Errorf("found %d rows for moved_in and moved_out, want 2", found)
	}
}
