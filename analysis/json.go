package analysis

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// Times are units.Time in Go and picosecond numbers in summary.json (keys ending in
// _ps): units.Time alone would marshal as its text ("1.5ms"). The series that carry
// times write them through these shadows, keeping their keys and key order.

func ps(t units.Time) int64 { return int64(t) }

func psList(ts []units.Time) []int64 {
	if ts == nil {
		return nil
	}
	out := make([]int64, len(ts))
	for i, t := range ts {
		out[i] = int64(t)
	}
	return out
}

// MarshalJSON writes the times in ps.
func (r DropRate) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		StartPs int64                `json:"start_ps"`
		BinPs   int64                `json:"bin_ps"`
		Reasons []records.DropReason `json:"reasons"`
		Counts  [][]int64            `json:"counts"`
		Total   []int64              `json:"total"`
	}{ps(r.StartPs), ps(r.BinPs), r.Reasons, r.Counts, r.Total})
}

// MarshalJSON writes the times in ps.
func (t PauseTimeline) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		StartPs int64       `json:"start_ps"`
		BinPs   int64       `json:"bin_ps"`
		Ports   []PortName  `json:"ports"`
		Paused  [][]float64 `json:"paused"`
	}{ps(t.StartPs), ps(t.BinPs), t.Ports, t.Paused})
}

// MarshalJSON writes the times in ps.
func (s ECNSeries) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		StartPs   int64     `json:"start_ps"`
		BinPs     int64     `json:"bin_ps"`
		Delivered []int64   `json:"delivered"`
		Marked    []int64   `json:"marked"`
		Fraction  []float64 `json:"fraction"`
	}{ps(s.StartPs), ps(s.BinPs), s.Delivered, s.Marked, s.Fraction})
}

// MarshalJSON writes the times in ps.
func (s BufferSeries) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Node     string  `json:"node"`
		Pool     uint8   `json:"pool"`
		StartPs  int64   `json:"start_ps"`
		BinPs    int64   `json:"bin_ps"`
		Windows  int     `json:"windows"`
		TimesPs  []int64 `json:"times_ps"`
		Peak     int64   `json:"peak_ingress_bytes"`
		Shared   []int64 `json:"shared_bytes"`
		Headroom []int64 `json:"headroom_bytes"`
		Ingress  []int64 `json:"ingress_bytes"`
		Egress   []int64 `json:"egress_bytes"`
	}{s.Node, s.Pool, ps(s.StartPs), ps(s.BinPs), s.Windows, psList(s.TimesPs), s.Peak, s.Shared, s.Headroom, s.Ingress, s.Egress})
}

// marshalNullNaN writes a struct as a JSON object, field by field in order under their
// json names (honouring "-" and omitempty), with NaN and infinite float64 fields as
// null: undefined is null, never 0.
func marshalNullNaN(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for i := range rt.NumField() {
		f := rt.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		fv := rv.Field(i)
		if strings.Contains(opts, "omitempty") && fv.IsZero() {
			continue
		}
		var val []byte
		if fv.Kind() == reflect.Float64 && (math.IsNaN(fv.Float()) || math.IsInf(fv.Float(), 0)) {
			val = []byte("null")
		} else {
			var err error
			if val, err = json.Marshal(fv.Interface()); err != nil {
				return nil, err
			}
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		key, _ := json.Marshal(name)
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
