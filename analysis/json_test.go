package analysis

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// The series that hold units.Time write every field of theirs, times as picosecond
// numbers (summary.json's *_ps keys), in field order: a field added to a series but
// not to its shadow fails here.
func TestTimeSeriesJSON(t *testing.T) {
	for _, v := range []any{
		DropRate{StartPs: 5 * units.Microsecond, BinPs: 7},
		PauseTimeline{StartPs: 5 * units.Microsecond, BinPs: 7},
		ECNSeries{StartPs: 5 * units.Microsecond, BinPs: 7},
		BufferSeries{StartPs: 5 * units.Microsecond, BinPs: 7, TimesPs: []units.Time{5 * units.Microsecond}},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			if tag := typ.Field(i).Tag.Get("json"); tag != "" && tag != "-" {
				keys = append(keys, `"`+strings.Split(tag, ",")[0]+`":`)
			}
		}
		at := -1
		for _, k := range keys {
			i := strings.Index(string(b), k)
			if i <= at {
				t.Errorf("%T: key %s missing or out of order in %s", v, k, b)
			}
			at = i
		}
		if !strings.Contains(string(b), `"start_ps":5000000,"bin_ps":7`) {
			t.Errorf("%T: times not in ps: %s", v, b)
		}
	}
}
