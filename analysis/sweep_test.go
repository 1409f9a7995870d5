package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/records"
)

// sweepOf builds a sweep summary by hand: axes, then per point its values and
// drops (lossless drops 0 everywhere), points in the grid's order.
func sweepOf(axes []records.SweepAxis, points [][]string, drops []float64) *SweepSummary {
	s := &SweepSummary{Dir: "sw", Axes: axes}
	for k, v := range points {
		d, zero := drops[k], 0.0
		s.Points = append(s.Points, SweepPoint{ID: k, Dir: records.PointDir(k), Values: v,
			Metrics: map[string]*float64{SweepDrops: &d, SweepLosslessDrops: &zero}})
	}
	s.Metrics = sweepMetrics(s.Points)
	s.Series = sweepSeries(s)
	s.Answers = sweepAnswers(s)
	s.Headline = sweepHeadline(s)
	return s
}

var bufferAxis = records.SweepAxis{Name: "BufferSize", Attribute: "Switch.BufferSize", Values: []string{"64MiB", "16MiB", "32MiB"},
	Kind: records.KindBytes, Numeric: []float64{64 << 20, 16 << 20, 32 << 20}}

var hashAxis = records.SweepAxis{Name: "hash", Values: []string{"crc16", "xor16"}, Kind: records.KindCategory}

// The answer is the smallest value with no drop, whatever order the file listed the
// values in; a line that never reaches zero has none; one that drops again at a
// larger value says so.
func TestSweepAnswers(t *testing.T) {
	s := sweepOf([]records.SweepAxis{hashAxis, bufferAxis},
		[][]string{{"crc16", "64MiB"}, {"crc16", "16MiB"}, {"crc16", "32MiB"}, {"xor16", "64MiB"}, {"xor16", "16MiB"}, {"xor16", "32MiB"}},
		[]float64{0, 50, 0, 7, 90, 20})
	type ans struct{ line, value string }
	var got []ans
	for _, a := range s.Answers {
		if a.Metric == SweepDrops {
			got = append(got, ans{strings.Join(a.LineAxes, " ") + "=" + strings.Join(a.LineValues, " "), a.Value})
			if a.Question != "smallest BufferSize with no drop" {
				t.Errorf("question %q", a.Question)
			}
		}
	}
	if !slices.Equal(got, []ans{{"hash=crc16", "32MiB"}, {"hash=xor16", ""}}) {
		t.Errorf("answers %v", got)
	}
	want := "Smallest BufferSize with no drop: 32MiB at hash=crc16; none up to 64MiB at hash=xor16."
	if s.Headline[0] != want {
		t.Errorf("headline %q, want %q", s.Headline[0], want)
	}
	if want := "Smallest BufferSize with no lossless drop: 16MiB (the smallest swept) at every hash."; s.Headline[1] != want {
		t.Errorf("headline %q, want %q", s.Headline[1], want)
	}
	if want := "Drops: from 0 (p0000: hash=crc16, BufferSize=64MiB) to 90 (p0004: hash=xor16, BufferSize=16MiB) over the 6 points."; !slices.Contains(s.Headline, want) {
		t.Errorf("headline %q lacks %q", s.Headline, want)
	}
	// Series: per hash, drops against the sizes in increasing order.
	for _, ser := range s.Series {
		if ser.Metric != SweepDrops {
			continue
		}
		if !slices.Equal(ser.Labels, []string{"16MiB", "32MiB", "64MiB"}) || !slices.Equal(ser.X, []float64{16 << 20, 32 << 20, 64 << 20}) ||
			!slices.Equal(ser.LineAxes, []string{"hash"}) {
			t.Errorf("series %+v", ser)
		}
		var ys []float64
		for _, y := range ser.Y {
			ys = append(ys, *y)
		}
		want := map[string][]float64{"crc16": {50, 0, 0}, "xor16": {90, 20, 7}}[ser.LineValues[0]]
		if !slices.Equal(ys, want) {
			t.Errorf("%v: y %v, want %v", ser.LineValues, ys, want)
		}
	}

	// Non-monotone: no drop at 32MiB, drops again at 64MiB.
	s = sweepOf([]records.SweepAxis{bufferAxis}, [][]string{{"64MiB"}, {"16MiB"}, {"32MiB"}}, []float64{3, 9, 0})
	if a := s.Answers[0]; a.Value != "32MiB" || !slices.Equal(a.Again, []string{"64MiB"}) || *a.Point != 2 || *a.X != 32<<20 {
		t.Errorf("answer %+v", a)
	}
	if want := "Smallest BufferSize with no drop: 32MiB (but not at 64MiB)."; s.Headline[0] != want {
		t.Errorf("headline %q, want %q", s.Headline[0], want)
	}
}

// Speedup raises the load: the question is the largest speedup with no drop.
func TestSweepAnswersSpeedup(t *testing.T) {
	sp := records.SweepAxis{Name: "speedup", Values: []string{"1", "2", "4"}, Kind: records.KindNumber, Numeric: []float64{1, 2, 4}}
	s := sweepOf([]records.SweepAxis{sp}, [][]string{{"1"}, {"2"}, {"4"}}, []float64{0, 0, 12})
	if a := s.Answers[0]; a.Question != "largest speedup with no drop" || a.Value != "2" {
		t.Errorf("answer %+v", a)
	}
	if want := "Largest speedup with no drop: 2."; s.Headline[0] != want {
		t.Errorf("headline %q, want %q", s.Headline[0], want)
	}
	// So do more copies of the capture and a higher target load.
	for _, name := range []string{"replicate", "target_load"} {
		ax := sp
		ax.Name = name
		s := sweepOf([]records.SweepAxis{ax}, [][]string{{"1"}, {"2"}, {"4"}}, []float64{0, 0, 12})
		if a := s.Answers[0]; a.Question != "largest "+name+" with no drop" || a.Value != "2" {
			t.Errorf("%s: answer %+v", name, a)
		}
	}
}

// Without a numeric axis the metrics go against the first varying axis, as
// categories; nothing is asked.
func TestSweepCategorical(t *testing.T) {
	lb := records.SweepAxis{Name: "lb", Values: []string{"none", "flowlet"}, Kind: records.KindCategory}
	s := sweepOf([]records.SweepAxis{hashAxis, lb}, [][]string{{"crc16", "none"}, {"crc16", "flowlet"}, {"xor16", "none"}, {"xor16", "flowlet"}},
		[]float64{4, 3, 2, 1})
	if len(s.Answers) != 0 {
		t.Errorf("answers %+v", s.Answers)
	}
	var n int
	for _, ser := range s.Series {
		if ser.Metric == SweepDrops {
			n++
			if ser.Axis != "hash" || !ser.Categorical || !slices.Equal(ser.X, []float64{0, 1}) || !slices.Equal(ser.LineAxes, []string{"lb"}) {
				t.Errorf("series %+v", ser)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d drop series, want one per lb value", n)
	}
}

// The table has a column per axis and metric, a row per point, undefined metrics
// empty.
func TestSweepTable(t *testing.T) {
	s := sweepOf([]records.SweepAxis{bufferAxis}, [][]string{{"64MiB"}, {"16MiB"}, {"32MiB"}}, []float64{3, 9.5, 0})
	s.Points[1].Metrics[SweepLosslessDrops] = nil
	tb := s.Table()
	if !slices.Equal(tb.Header, []string{"point", "BufferSize", "drops", "lossless_drops"}) {
		t.Errorf("header %v", tb.Header)
	}
	if !slices.Equal(tb.Rows[1], []string{"p0001", "16MiB", "9.5", ""}) || !slices.Equal(tb.Rows[2], []string{"p0002", "32MiB", "0", "0"}) {
		t.Errorf("rows %v", tb.Rows)
	}
}

// Lines with one answer are named by the values they share: every value of an axis
// is left out; a group that is no product of values lists its first lines.
func TestSweepHeadlineGroups(t *testing.T) {
	tr := records.SweepAxis{Name: "transport", Values: []string{"open", "closed"}, Kind: records.KindCategory}
	h3 := records.SweepAxis{Name: "hash", Values: []string{"a", "b", "c"}, Kind: records.KindCategory}
	buf := records.SweepAxis{Name: "BufferSize", Values: []string{"16MiB", "128MiB"}, Kind: records.KindBytes, Numeric: []float64{16 << 20, 128 << 20}}
	var points [][]string
	for _, h := range h3.Values {
		for _, t := range tr.Values {
			for _, b := range buf.Values {
				points = append(points, []string{h, t, b})
			}
		}
	}
	// Open loop drops at 16MiB, closed never; hash c drops at 128MiB open loop too.
	drops := make([]float64, len(points))
	for k, p := range points {
		if p[1] == "open" && (p[2] == "16MiB" || p[0] == "c") {
			drops[k] = 5
		}
	}
	s := sweepOf([]records.SweepAxis{h3, tr, buf}, points, drops)
	want := "Smallest BufferSize with no drop: 128MiB at hash=a/b, transport=open; 16MiB (the smallest swept) at transport=closed, every hash; none up to 128MiB at hash=c, transport=open."
	if s.Headline[0] != want {
		t.Errorf("headline\n%q, want\n%q", s.Headline[0], want)
	}
	// Not a product: (a, open) and (b, closed) share an answer.
	for k, p := range points {
		drops[k] = 0
		if (p[0] == "a" && p[1] == "open" || p[0] == "b" && p[1] == "closed" || p[0] == "c") && p[2] == "16MiB" {
			drops[k] = 1
		}
	}
	s = sweepOf([]records.SweepAxis{h3, tr, buf}, points, drops)
	want = "Smallest BufferSize with no drop: 128MiB at hash=a, transport=open; at hash=b, transport=closed; at hash=c, transport=open and 1 more combinations of hash, transport; 16MiB (the smallest swept) at hash=a, transport=closed; at hash=b, transport=open."
	if s.Headline[0] != want {
		t.Errorf("headline\n%q, want\n%q", s.Headline[0], want)
	}
}

// A partial analysis (Options.Partial) says which points it left out, with their
// status and reason, and an answer on a line with a point left out says which value
// was not analyzed.
func TestSweepPartial(t *testing.T) {
	s := &SweepSummary{Dir: "sw", Axes: []records.SweepAxis{hashAxis, bufferAxis}}
	all := [][]string{{"crc16", "64MiB"}, {"crc16", "16MiB"}, {"crc16", "32MiB"}, {"xor16", "64MiB"}, {"xor16", "16MiB"}, {"xor16", "32MiB"}}
	drops := []float64{0, 50, -1, 7, 90, 20} // p0002 failed
	for k, v := range all {
		if drops[k] < 0 {
			s.NotDone = append(s.NotDone, records.PointState{ID: k, Dir: records.PointDir(k), Values: v, Status: records.StatusFailed, Detail: "replay: boom"})
			continue
		}
		d, zero := drops[k], 0.0
		s.Points = append(s.Points, SweepPoint{ID: k, Dir: records.PointDir(k), Values: v, Metrics: map[string]*float64{SweepDrops: &d, SweepLosslessDrops: &zero}})
	}
	s.Metrics = sweepMetrics(s.Points)
	s.Series = sweepSeries(s)
	s.Answers = sweepAnswers(s)
	s.Headline = sweepHeadline(s)
	for _, want := range []string{
		"Partial sweep: 5 of 6 points analyzed; not done: p0002 (hash=crc16, BufferSize=32MiB) failed: replay: boom.",
		"Smallest BufferSize with no drop: 64MiB (not analyzed: 32MiB) at hash=crc16; none up to 64MiB at hash=xor16.",
		"Drops: from 0 (p0000: hash=crc16, BufferSize=64MiB) to 90 (p0004: hash=xor16, BufferSize=16MiB) over the 5 points.",
	} {
		if !slices.Contains(s.Headline, want) {
			t.Errorf("headline %q lacks %q", s.Headline, want)
		}
	}
	for _, a := range s.Answers {
		want := map[string][]string{"crc16": {"32MiB"}}[a.LineValues[0]]
		if !slices.Equal(a.NotAnalyzed, want) {
			t.Errorf("%s at %v: not analyzed %v, want %v", a.Question, a.LineValues, a.NotAnalyzed, want)
		}
	}
	for _, ser := range s.Series {
		if ser.Metric == SweepDrops && ser.LineValues[0] == "crc16" && !slices.Equal(ser.Labels, []string{"16MiB", "64MiB"}) {
			t.Errorf("crc16 series over %v, want the analyzed 16MiB and 64MiB", ser.Labels)
		}
	}
}

// A sweep where nothing congested at any point (no drop, lossless drop, PFC frame or
// CE mark) says so in one line with the busiest host link's largest load, instead of
// answers that are all "the smallest swept".
func TestSweepNothingCongested(t *testing.T) {
	sp := records.SweepAxis{Name: "speedup", Values: []string{"1", "4"}, Kind: records.KindNumber, Numeric: []float64{1, 4}}
	s := &SweepSummary{Dir: "sw", Axes: []records.SweepAxis{sp}, loadSource: LoadFromRunJSON}
	for k, load := range []float64{0.03, 0.12} {
		zero, l := 0.0, load
		s.Points = append(s.Points, SweepPoint{ID: k, Dir: records.PointDir(k), Values: []string{sp.Values[k]}, Metrics: map[string]*float64{
			SweepDrops: &zero, SweepLosslessDrops: &zero, SweepPFCFrames: &zero, SweepCEMarked: &zero, SweepHostLoad: &l}})
	}
	s.Metrics = sweepMetrics(s.Points)
	s.Series = sweepSeries(s)
	s.Answers = sweepAnswers(s)
	s.Headline = sweepHeadline(s)
	want := "Nothing congested at any of the 2 points: no drop, PFC pause or ECN mark; the busiest host link's load reached at most 12% of its speed (p0001: speedup=4; its peak 1 ms bin, run.json offered_load). The fabric was not loaded: raise the load (speedup, more traffic) to see it congest."
	if !s.Quiet() || !slices.Equal(s.Headline, []string{want}) {
		t.Errorf("headline %q, want %q", s.Headline, want)
	}
	// One drop somewhere: the usual answers.
	one := 1.0
	s.Points[0].Metrics[SweepDrops] = &one
	s.Answers = sweepAnswers(s)
	if s.Quiet() || slices.Contains(sweepHeadline(s), want) {
		t.Errorf("a sweep with a drop reads quiet: %q", sweepHeadline(s))
	}
}
