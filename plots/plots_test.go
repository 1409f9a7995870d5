package plots

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/cmpimg"
	"gonum.org/v1/plot/plotter"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Golden figures: go test ./plots -run TestGolden -update rewrites
// testdata/*_golden.png (-update, as in every package of the repository).
var update = flag.Bool("update", false, "rewrite testdata/*_golden.png")

// goldenOptions keeps the committed PNGs small.
var goldenOptions = Options{DPI: 60}

// goldenDelta is cmpimg's normalized per-pixel colour tolerance: it absorbs
// floating-point differences between platforms (fused multiply-add on arm64)
// but not a moved line or a changed colour.
const goldenDelta = 0.05

type figureCase struct {
	name string
	make func(Options) (*Figure, error)
}

func figureCases() []figureCase {
	return []figureCase{
		{NameDropsOverTime, func(o Options) (*Figure, error) { return DropsOverTime(sampleDrops(), o) }},
		{NamePFCPauseTimeline, func(o Options) (*Figure, error) { return PFCPauseTimeline(samplePauses(60), o) }},
		{NameBufferOccupancy, func(o Options) (*Figure, error) { return BufferOccupancy(sampleBuffers(), o) }},
		{NameECMPMemberLoad, func(o Options) (*Figure, error) { return ECMPMemberLoad(sampleECMP(), o) }},
		{NameHashComparison, func(o Options) (*Figure, error) { return HashComparison(sampleComparison(), o) }},
		{NameDelayCDF, func(o Options) (*Figure, error) { return DelayCDF(sampleDelay(), o) }},
		{NameECNMarking, func(o Options) (*Figure, error) { return ECNMarking(sampleECN(), o) }},
		{NameFCTSlowdown, func(o Options) (*Figure, error) { return FCTSlowdown(sampleSlowdown(), o) }},
		{NameCNPOverTime, func(o Options) (*Figure, error) { return CNPOverTime(sampleCNPs(), o) }},
	}
}

func TestGolden(t *testing.T) {
	for _, fc := range figureCases() {
		t.Run(fc.name, func(t *testing.T) {
			f, err := fc.make(goldenOptions)
			if err != nil {
				t.Fatal(err)
			}
			if f.Name != fc.name {
				t.Errorf("Name = %q, want %q", f.Name, fc.name)
			}
			got, err := f.Render(PNG)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", fc.name+"_golden.png")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			ok, err := cmpimg.EqualApprox("png", got, want, goldenDelta)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				out := filepath.Join(t.TempDir(), fc.name+".png")
				os.WriteFile(out, got, 0o644)
				t.Errorf("%s differs from %s beyond tolerance %v; got written to %s "+
					"(if the change is intended: go test -run TestGolden -update)", fc.name, golden, goldenDelta, out)
			}
		})
	}
}

// The golden comparison must notice a changed figure: the drops figure of other
// data is not within tolerance of the committed one.
func TestGoldenDetectsChange(t *testing.T) {
	d := sampleDrops()
	d.Reasons[1].Counts[20] += 15
	f, err := DropsOverTime(d, goldenOptions)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Render(PNG)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", NameDropsOverTime+"_golden.png"))
	if err != nil {
		t.Skip("no golden file yet")
	}
	if ok, err := cmpimg.EqualApprox("png", got, want, goldenDelta); err != nil || ok {
		t.Errorf("changed data compared equal to the golden figure (ok=%v, err=%v)", ok, err)
	}
}

func TestDeterministic(t *testing.T) {
	for _, fc := range figureCases() {
		t.Run(fc.name, func(t *testing.T) {
			for _, format := range []Format{PNG, SVG} {
				var outs [2][]byte
				for i := range outs {
					f, err := fc.make(goldenOptions)
					if err != nil {
						t.Fatal(err)
					}
					if outs[i], err = f.Render(format); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(outs[0], outs[1]) {
					t.Errorf("%s: two renderings of the same input differ", format)
				}
			}
		})
	}
}

// svgTexts checks that b is well-formed XML with an <svg> root and returns its
// text content pieces.
func svgTexts(t *testing.T, b []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var texts []string
	root := ""
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG not well-formed: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				root = tk.Name.Local
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if s := strings.TrimSpace(string(tk)); s != "" {
				texts = append(texts, s)
			}
		}
	}
	if root != "svg" || depth != 0 {
		t.Fatalf("SVG root = %q, open elements at end = %d", root, depth)
	}
	return texts
}

func TestSVGWellFormed(t *testing.T) {
	for _, fc := range figureCases() {
		t.Run(fc.name, func(t *testing.T) {
			f, err := fc.make(Options{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := f.Render(SVG)
			if err != nil {
				t.Fatal(err)
			}
			texts := svgTexts(t, b)
			if !slices.Contains(texts, f.Title) {
				t.Errorf("title %q not among the SVG's texts", f.Title)
			}
		})
	}
}

func TestSaveWritesBothFormats(t *testing.T) {
	dir := t.TempDir()
	f, err := DropsOverTime(sampleDrops(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := f.Save(dir)
	if err != nil {
		t.Fatal(err)
	}
	if files.PNG != filepath.Join(dir, "drops_over_time.png") || files.SVG != filepath.Join(dir, "drops_over_time.svg") {
		t.Errorf("paths = %+v", files)
	}
	pngBytes, err := os.ReadFile(files.PNG)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pngBytes, files.PNGData) {
		t.Error("PNGData differs from the file written")
	}
	img, err := png.Decode(bytes.NewReader(pngBytes))
	if err != nil {
		t.Fatal(err)
	}
	// 8 x 4.5 in at 144 dpi.
	if b := img.Bounds(); b.Dx() != 1152 || b.Dy() != 648 {
		t.Errorf("PNG is %dx%d, want 1152x648", b.Dx(), b.Dy())
	}
	svgBytes, err := os.ReadFile(files.SVG)
	if err != nil {
		t.Fatal(err)
	}
	svgTexts(t, svgBytes)
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only the two figures (no temporary files)", names)
	}
	if st, _ := os.Stat(files.PNG); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
}

func TestSaveToMissingDir(t *testing.T) {
	f, err := DropsOverTime(sampleDrops(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Save(filepath.Join(t.TempDir(), "missing"))
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("err = %v, want one naming the directory", err)
	}
}

func TestRenderUnknownFormat(t *testing.T) {
	f, _ := DropsOverTime(sampleDrops(), Options{})
	if _, err := f.Render("pdf"); err == nil {
		t.Error("pdf rendered, want an error")
	}
	var nilFig *Figure
	if _, err := nilFig.Render(PNG); err == nil {
		t.Error("nil figure rendered, want an error")
	}
}

func TestNoData(t *testing.T) {
	zeroBins := func(n int) []float64 { return make([]float64, n) }
	cases := []struct {
		name, figure, reason string
		make                 func() (*Figure, error)
	}{
		{"drops/none", NameDropsOverTime, "no drops", func() (*Figure, error) {
			return DropsOverTime(DropBins{BinWidth: units.Microsecond}, Options{})
		}},
		{"drops/zero", NameDropsOverTime, "no drops", func() (*Figure, error) {
			return DropsOverTime(DropBins{BinWidth: units.Microsecond, Reasons: []ReasonCounts{
				{Reason: "headroom", Counts: zeroBins(5)}, {Reason: "pool-full", Counts: zeroBins(5)}}}, Options{})
		}},
		{"pfc/none", NamePFCPauseTimeline, "no PFC pauses", func() (*Figure, error) {
			return PFCPauseTimeline(PauseGrid{BinWidth: units.Microsecond}, Options{})
		}},
		{"pfc/zero", NamePFCPauseTimeline, "no PFC pauses", func() (*Figure, error) {
			return PFCPauseTimeline(PauseGrid{BinWidth: units.Microsecond, Rows: []PauseRow{{Node: "leaf0", Paused: zeroBins(3)}}}, Options{})
		}},
		{"buffer/none", NameBufferOccupancy, "buffers stayed empty", func() (*Figure, error) {
			return BufferOccupancy(PoolOccupancy{}, Options{})
		}},
		{"buffer/zero", NameBufferOccupancy, "buffers stayed empty", func() (*Figure, error) {
			return BufferOccupancy(PoolOccupancy{Series: []PoolSeries{
				{Node: "leaf0", Pool: "lossy", Samples: plotter.XYs{{X: 0, Y: 0}, {X: 10, Y: 0}}},
				{Node: "leaf1", Pool: "lossy"}}}, Options{})
		}},
		{"ecmp/none", NameECMPMemberLoad, "no traffic on equal-cost sets", func() (*Figure, error) {
			return ECMPMemberLoad(ECMPLoad{}, Options{})
		}},
		{"ecmp/zero", NameECMPMemberLoad, "no traffic on equal-cost sets", func() (*Figure, error) {
			return ECMPMemberLoad(ECMPLoad{Sets: []ECMPSet{{Node: "leaf0", Set: "0", Bytes: plotter.Values{0, 0}}}}, Options{})
		}},
		{"compare/none", NameHashComparison, "no metrics to compare", func() (*Figure, error) {
			return HashComparison(Comparison{}, Options{})
		}},
		{"compare/nan", NameHashComparison, "no metrics to compare", func() (*Figure, error) {
			return HashComparison(Comparison{Metrics: []MetricCI{{Name: "CoV", Values: []MethodValue{
				{Method: "crc32", Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}}}}}, Options{})
		}},
		{"delay/none", NameDelayCDF, "no delivered packets", func() (*Figure, error) {
			return DelayCDF(nil, Options{})
		}},
		{"delay/zero", NameDelayCDF, "no delivered packets", func() (*Figure, error) {
			return DelayCDF([]DelayClass{{Label: "TC 0", Buckets: []DelayBucket{{Lo: 0, Hi: 10, Packets: 0}}}}, Options{})
		}},
		{"ecn/none", NameECNMarking, "no ECN marks", func() (*Figure, error) {
			return ECNMarking(ECNMarks{}, Options{})
		}},
		{"fct/none", NameFCTSlowdown, "no flow completed", func() (*Figure, error) {
			return FCTSlowdown(Slowdown{Buckets: []string{"< MTU"}}, Options{})
		}},
		{"fct/nan", NameFCTSlowdown, "no flow completed", func() (*Figure, error) {
			return FCTSlowdown(Slowdown{Buckets: []string{"< MTU"}, Series: []SlowdownSeries{
				{Label: "open", P50: []float64{math.NaN()}, P99: []float64{math.NaN()}, Complete: []float64{0}}}}, Options{})
		}},
		{"cnp/zero", NameCNPOverTime, "no CNPs or rate cuts", func() (*Figure, error) {
			return CNPOverTime(CNPBins{BinWidth: units.Microsecond, CNPs: zeroBins(4), RateCuts: zeroBins(4)}, Options{})
		}},
		{"ecn/zero", NameECNMarking, "no ECN marks", func() (*Figure, error) {
			return ECNMarking(ECNMarks{Queues: []QueueMarks{{Node: "leaf0", Packets: 100}},
				BinWidth: units.Microsecond, Marked: zeroBins(2), Packets: []float64{5, 5}}, Options{})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.make()
			if f != nil {
				t.Error("got a figure, want none")
			}
			if !errors.Is(err, ErrNoData) {
				t.Fatalf("err = %v, want ErrNoData", err)
			}
			var nd *NoDataError
			if !errors.As(err, &nd) || nd.Figure != tc.figure || nd.Reason != tc.reason {
				t.Errorf("err = %#v, want figure %q reason %q", err, tc.figure, tc.reason)
			}
		})
	}
}

func TestInvalidInput(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name, want string
		make       func() (*Figure, error)
	}{
		{"drops/bin width", "BinWidth", func() (*Figure, error) {
			return DropsOverTime(DropBins{Reasons: []ReasonCounts{{Reason: "headroom", Counts: []float64{1}}}}, Options{})
		}},
		{"drops/ragged", `reason "pool-full" has 1 bins`, func() (*Figure, error) {
			return DropsOverTime(DropBins{BinWidth: 1, Reasons: []ReasonCounts{
				{Reason: "headroom", Counts: []float64{1, 2}}, {Reason: "pool-full", Counts: []float64{1}}}}, Options{})
		}},
		{"drops/negative", `reason "headroom" bin 1`, func() (*Figure, error) {
			return DropsOverTime(DropBins{BinWidth: 1, Reasons: []ReasonCounts{{Reason: "headroom", Counts: []float64{1, -2}}}}, Options{})
		}},
		{"pfc/fraction", "row leaf0:1/tc3 bin 0", func() (*Figure, error) {
			return PFCPauseTimeline(PauseGrid{BinWidth: 1, Rows: []PauseRow{{Node: "leaf0", Port: 1, TC: 3, Paused: []float64{1.5}}}}, Options{})
		}},
		{"pfc/ragged", "row leaf1:0/tc0 has 1 bins", func() (*Figure, error) {
			return PFCPauseTimeline(PauseGrid{BinWidth: 1, Rows: []PauseRow{
				{Node: "leaf0", Paused: []float64{0.5, 0}}, {Node: "leaf1", Paused: []float64{nan}}}}, Options{})
		}},
		{"buffer/time order", "pool leaf0/lossy sample 1", func() (*Figure, error) {
			return BufferOccupancy(PoolOccupancy{Series: []PoolSeries{{Node: "leaf0", Pool: "lossy",
				Samples: plotter.XYs{{X: 10, Y: 1}, {X: 5, Y: 1}}}}}, Options{})
		}},
		{"buffer/negative", "pool leaf0/lossy sample 0", func() (*Figure, error) {
			return BufferOccupancy(PoolOccupancy{Series: []PoolSeries{{Node: "leaf0", Pool: "lossy",
				Samples: plotter.XYs{{X: 10, Y: -1}}}}}, Options{})
		}},
		{"ecmp/members", "2 member names for 3 values", func() (*Figure, error) {
			return ECMPMemberLoad(ECMPLoad{Sets: []ECMPSet{{Node: "leaf0", Set: "1",
				Members: []string{"a", "b"}, Bytes: plotter.Values{1, 2, 3}}}}, Options{})
		}},
		{"ecmp/negative", "set leaf0 set 1 member 1", func() (*Figure, error) {
			return ECMPMemberLoad(ECMPLoad{Sets: []ECMPSet{{Node: "leaf0", Set: "1", Bytes: plotter.Values{1, -2}}}}, Options{})
		}},
		{"compare/reversed", `metric "CoV" method "xor": interval`, func() (*Figure, error) {
			return HashComparison(Comparison{Metrics: []MetricCI{{Name: "CoV", Values: []MethodValue{
				{Method: "xor", Value: 1, Lo: 2, Hi: 0.5}}}}}, Options{})
		}},
		{"delay/range", `class "TC 1" bucket 0`, func() (*Figure, error) {
			return DelayCDF([]DelayClass{{Label: "TC 1", Buckets: []DelayBucket{{Lo: 10, Hi: 10, Packets: 1}}}}, Options{})
		}},
		{"delay/overlap", `class "TC 1" bucket 1: starts at 5 ps`, func() (*Figure, error) {
			return DelayCDF([]DelayClass{{Label: "TC 1", Buckets: []DelayBucket{{Lo: 1, Hi: 10, Packets: 1}, {Lo: 5, Hi: 20, Packets: 1}}}}, Options{})
		}},
		{"delay/cdf", `class "TC 2" point 1`, func() (*Figure, error) {
			return DelayCDF([]DelayClass{{Label: "TC 2", CDF: plotter.XYs{{X: 10, Y: 0.5}, {X: 20, Y: 0.4}}}}, Options{})
		}},
		{"ecn/marked>packets", "queue leaf0:2/tc3", func() (*Figure, error) {
			return ECNMarking(ECNMarks{Queues: []QueueMarks{{Node: "leaf0", Port: 2, TC: 3, Marked: 5, Packets: 4}}}, Options{})
		}},
		{"fct/ragged", `series "dctcp" has 1, 2 and 2 values for 2 buckets`, func() (*Figure, error) {
			return FCTSlowdown(Slowdown{Buckets: []string{"a", "b"}, Series: []SlowdownSeries{
				{Label: "dctcp", P50: []float64{1}, P99: []float64{1, 2}, Complete: []float64{1, 1}}}}, Options{})
		}},
		{"fct/zero", `series "open" bucket 0: slowdown 0`, func() (*Figure, error) {
			return FCTSlowdown(Slowdown{Buckets: []string{"a"}, Series: []SlowdownSeries{
				{Label: "open", P50: []float64{0}, P99: []float64{1}, Complete: []float64{1}}}}, Options{})
		}},
		{"cnp/bins", "3 CNP bins but 2 rate-cut bins", func() (*Figure, error) {
			return CNPOverTime(CNPBins{BinWidth: 1, CNPs: []float64{1, 2, 3}, RateCuts: []float64{1, 2}}, Options{})
		}},
		{"cnp/negative", "bin 1: count -1", func() (*Figure, error) {
			return CNPOverTime(CNPBins{BinWidth: 1, CNPs: []float64{1, -1}, RateCuts: []float64{0, 0}}, Options{})
		}},
		{"ecn/bins", "2 marked bins but 1 packet bins", func() (*Figure, error) {
			return ECNMarking(ECNMarks{BinWidth: 1, Marked: []float64{1, 1}, Packets: []float64{2}}, Options{})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.make()
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, ErrNoData) {
				t.Fatalf("err = %v: invalid input reported as no data", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// A cap on rows keeps the most paused port-classes, says "top N of M", and never
// draws the rows that were left out or never paused.
func TestPauseTimelineTopRows(t *testing.T) {
	g := samplePauses(60) // rows 4, 9, ... are never paused: 48 paused rows
	g.MaxRows = 10
	f, err := PFCPauseTimeline(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "top 10 of 48 paused port-classes"; !strings.HasPrefix(f.Note, want) {
		t.Errorf("note = %q, want prefix %q", f.Note, want)
	}
	b, err := f.Render(SVG)
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, b)
	// Rank rows by paused time as the figure should.
	type rk struct {
		label string
		total float64
	}
	var rows []rk
	for _, r := range g.Rows {
		var s float64
		for _, v := range r.Paused {
			s += v
		}
		rows = append(rows, rk{r.Label(), s})
	}
	slices.SortStableFunc(rows, func(a, b rk) int {
		if a.total != b.total {
			if a.total > b.total {
				return -1
			}
			return 1
		}
		return strings.Compare(a.label, b.label)
	})
	for i, r := range rows {
		shown := slices.Contains(texts, r.label)
		if shown != (i < 10) {
			t.Errorf("row %d %s (paused %.2f bins): shown = %v", i, r.label, r.total, shown)
		}
	}
}

func TestTopNNotes(t *testing.T) {
	b := sampleBuffers()
	f, err := BufferOccupancy(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "8 busiest of 10 pools, by peak occupancy"; f.Note != want {
		t.Errorf("buffer note = %q, want %q", f.Note, want)
	}
	e, err := ECMPMemberLoad(sampleECMP(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.Note, "6 most imbalanced of 8 equal-cost sets") {
		t.Errorf("ecmp note = %q", e.Note)
	}
	q, err := ECNMarking(sampleECN(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(q.Note, "top 20 of 27 marking queues") {
		t.Errorf("ecn note = %q", q.Note)
	}
	// The caller kept the 40 most paused of 54 port-classes (8 of the 40 rows of the
	// sample are never paused and not drawn): the note says so.
	g := samplePauses(40)
	g.Total = 54
	p, err := PFCPauseTimeline(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Note, "top 32 of 54 paused port-classes") {
		t.Errorf("pause timeline note = %q, want top 32 of 54", p.Note)
	}
}

// Hostile or exotic node names neither break the SVG nor vanish from the PNG.
func TestHostileLabels(t *testing.T) {
	g := PauseGrid{BinWidth: units.Microsecond, Rows: []PauseRow{
		{Node: `<script>alert("x")</script>&`, Port: 1, TC: 3, Paused: []float64{0.5, 1}},
		{Node: "leaf\u2713\x00", Port: 2, TC: 3, Paused: []float64{0.25, 0}},
	}}
	f, err := PFCPauseTimeline(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.Render(SVG)
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, b)
	for _, want := range []string{`<script>alert("x")</script>&:1/tc3`, "leaf??:2/tc3"} {
		if !slices.Contains(texts, want) {
			t.Errorf("label %q not among SVG texts %q", want, texts)
		}
	}
	if bytes.Contains(b, []byte("<script>")) {
		t.Error("raw <script> element in the SVG")
	}
}

func TestSafeText(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"leaf3:7:3", 0, "leaf3:7:3"},
		{"caf\u00e9 \u00b5s", 0, "caf\u00e9 \u00b5s"}, // Latin-1 is in Liberation Sans
		{"ok \u2713", 0, "ok ?"},                      // check mark is not
		{"a\tb\nc\x01", 0, "a b c?"},
		{"\xff", 0, "?"},
		{"spine-switch-number-12", 10, "spine-s..."},
		{"abc", 3, "abc"},
	}
	for _, tc := range cases {
		if got := safeText(tc.in, tc.max); got != tc.want {
			t.Errorf("safeText(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	labels := func(lo, hi float64, n int) []string {
		var out []string
		for _, tk := range (niceTicks{n: n}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	cases := []struct {
		lo, hi float64
		n      int
		want   []string
	}{
		{0, 6, 7, []string{"0", "1", "2", "3", "4", "5", "6"}},
		{0, 40, 6, []string{"0", "10", "20", "30", "40"}},
		{0, 1, 6, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{0.75, 2.05, 6, []string{"0.75", "1.00", "1.25", "1.50", "1.75", "2.00"}},
		{2, 6, 5, []string{"2", "3", "4", "5", "6"}},
		{0, 2000, 7, []string{"0", "500", "1000", "1500", "2000"}},
		{-5, 5, 6, []string{"-4", "-2", "0", "2", "4"}},
	}
	for _, tc := range cases {
		if got := labels(tc.lo, tc.hi, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("ticks(%v, %v, %d) = %q, want %q", tc.lo, tc.hi, tc.n, got, tc.want)
		}
	}
}

func TestDecimateKeepsExtremes(t *testing.T) {
	xys := make(plotter.XYs, 100000)
	for i := range xys {
		xys[i] = plotter.XY{X: float64(i), Y: math.Sin(float64(i) / 50)}
	}
	xys[31337].Y = 7  // a spike
	xys[77777].Y = -3 // a dip
	out := decimate(xys, 1200)
	if len(out) > 1200 || len(out) < 900 {
		t.Errorf("len = %d, want at most 1200 and most buckets kept", len(out))
	}
	var hasSpike, hasDip bool
	for i, p := range out {
		hasSpike = hasSpike || p.Y == 7
		hasDip = hasDip || p.Y == -3
		if i > 0 && p.X < out[i-1].X {
			t.Fatalf("point %d out of time order", i)
		}
	}
	if !hasSpike || !hasDip {
		t.Errorf("spike kept %v, dip kept %v", hasSpike, hasDip)
	}
	short := xys[:10]
	if got := decimate(short, 1200); !slices.Equal(got, short) {
		t.Error("short series changed")
	}
}

// Count, duration and share panels start at 0 (not below it, whatever the padding),
// also when every value is 0; ratio panels keep their padding. Only the Marked method
// is drawn as best.
func TestComparisonAxes(t *testing.T) {
	vals := func(vs ...float64) []MethodValue {
		var out []MethodValue
		for i, v := range vs {
			out = append(out, MethodValue{Method: string(rune('a' + i)), Value: v, Lo: math.NaN(), Hi: math.NaN()})
		}
		return out
	}
	for _, c := range []struct {
		m       MetricCI
		wantMin float64
	}{
		{MetricCI{Name: "drops", Quantity: Count, Values: vals(0, 0, 0)}, 0},
		{MetricCI{Name: "drops", Quantity: Count, Values: vals(5, 7, 6)}, 0},
		{MetricCI{Name: "paused", Quantity: Duration, Values: vals(2e9, 2.1e9)}, 0},
		{MetricCI{Name: "share", Quantity: Share, Values: vals(0.2, 0.3)}, 0},
	} {
		p, err := comparisonPanel(c.m, -1)
		if err != nil {
			t.Fatal(err)
		}
		if p.Y.Min != c.wantMin || !(p.Y.Max > p.Y.Min) {
			t.Errorf("%s %v: axis [%v, %v], want it from %v", c.m.Name, c.m.Values, p.Y.Min, p.Y.Max, c.wantMin)
		}
	}
	p, err := comparisonPanel(MetricCI{Name: "max/mean", Quantity: Number, Values: vals(1.2, 1.6)}, -1)
	if err != nil || !(p.Y.Min < 1.2 && p.Y.Min > 1) {
		t.Errorf("ratio axis from %v, want just below 1.2 (%v)", p.Y.Min, err)
	}
	// One unit per quantity: AxisUnit is the panel's, for the table beside it.
	if div, unit := AxisUnit(MetricCI{Quantity: Duration, Values: vals(2.45e9, 3.3e9)}); div != 1e9 || unit != "ms" {
		t.Errorf("AxisUnit of 2.45 and 3.3 ms: %v %s", div, unit)
	}
	c := Comparison{Metrics: []MetricCI{{Name: "drops", Quantity: Count, Better: Lower, Values: vals(0, 0)}}}
	if _, err := HashComparison(c, Options{}); err != nil {
		t.Fatal(err)
	}
}

// The pause heatmap leaves no seam between adjacent cells: rows paused the whole
// time (alternating 100% and 97% bins, so cells are not merged) render as one
// solid band (gonum's HeatMap shows hairlines unrasterized).
func TestPauseCellsNoSeams(t *testing.T) {
	row := make([]float64, 200)
	for i := range row {
		row[i] = 1 - 0.03*float64(i%2)
	}
	g := PauseGrid{BinWidth: units.Microsecond, Rows: []PauseRow{
		{Node: "a", Paused: row}, {Node: "b", Paused: row}, {Node: "c", Paused: row}}}
	f, err := PFCPauseTimeline(g, Options{DPI: 96})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := f.Render(PNG)
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	// Scan the middle row of pixels of the image horizontally and vertically
	// through the heatmap: within the dark band no pixel may be light.
	cm, _ := pauseColors()
	full, _ := cm.At(100)
	fr, fg, fb, _ := full.RGBA()
	isFull := func(x, y int) bool {
		r, g, b, _ := img.At(x, y).RGBA()
		d := func(a, b uint32) float64 { return math.Abs(float64(a) - float64(b)) }
		return d(r, fr)+d(g, fg)+d(b, fb) < 3*0x1800
	}
	bounds := img.Bounds()
	midY := findBand(bounds, isFull)
	if midY < 0 {
		t.Fatal("no fully paused band found")
	}
	x0, x1 := -1, -1
	for x := bounds.Min.X; x < bounds.Max.X; x++ {
		if isFull(x, midY) {
			if x0 < 0 {
				x0 = x
			}
			x1 = x
		}
	}
	for x := x0; x <= x1; x++ {
		if !isFull(x, midY) {
			t.Fatalf("seam at x=%d in the paused band [%d, %d] (y=%d)", x, x0, x1, midY)
		}
	}
	midX := (x0 + x1) / 2
	y0, y1 := -1, -1
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		if isFull(midX, y) {
			if y0 < 0 {
				y0 = y
			}
			y1 = y
		}
	}
	for y := y0; y <= y1; y++ {
		if !isFull(midX, y) {
			t.Fatalf("seam at y=%d between rows [%d, %d] (x=%d)", y, y0, y1, midX)
		}
	}
	if x1-x0 < bounds.Dx()/2 || y1-y0 < bounds.Dy()/4 {
		t.Errorf("band %dx%d px is smaller than expected", x1-x0, y1-y0)
	}
}

func findBand(b image.Rectangle, full func(x, y int) bool) int {
	x := b.Min.X + b.Dx()/2
	for y := b.Min.Y; y < b.Max.Y; y++ {
		if full(x, y) {
			// Step into the band.
			for y2 := y; y2 < b.Max.Y; y2++ {
				if !full(x, y2) {
					return (y + y2) / 2
				}
			}
		}
	}
	return -1
}

func TestTimeBins(t *testing.T) {
	// 1300 bins of 1 us from 1 ms: merged 3 at a time into 434 bins, the last
	// holding one source bin.
	tb := newTimeBins(units.Millisecond, units.Microsecond, 1300)
	if tb.k != 3 || tb.n != 434 || tb.width != 3e6 || tb.unit != "us" {
		t.Fatalf("k=%d n=%d width=%v unit=%s", tb.k, tb.n, tb.width, tb.unit)
	}
	if tb.edges[0] != 1000 || tb.edges[1] != 1003 || tb.edges[433] != 2299 || tb.edges[434] != 2300 {
		t.Errorf("edges %v ... %v", tb.edges[:2], tb.edges[432:])
	}
	vals := make([]float64, 1300)
	for i := range vals {
		vals[i] = float64(i % 3) // 0, 1, 2, 0, ...
	}
	vals[1299] = 0.5
	sum, mean := tb.sum(vals), tb.mean(vals)
	if sum[0] != 3 || mean[0] != 1 || sum[433] != 0.5 || mean[433] != 0.5 {
		t.Errorf("sum %v %v, mean %v %v", sum[0], sum[433], mean[0], mean[433])
	}
	// Conservation: merged sums add up to the source total.
	var total, src float64
	for _, v := range sum {
		total += v
	}
	for _, v := range vals {
		src += v
	}
	if total != src {
		t.Errorf("merged total %v, source total %v", total, src)
	}
	small := newTimeBins(0, units.Millisecond, 60)
	if small.k != 1 || small.n != 60 || small.unit != "ms" {
		t.Errorf("60 bins: k=%d n=%d unit=%s", small.k, small.n, small.unit)
	}
}

// Members without names are labelled by index; Measure changes the labels.
func TestECMPMemberNamesAndMeasure(t *testing.T) {
	f, err := ECMPMemberLoad(ECMPLoad{Measure: "flows", Sets: []ECMPSet{{Node: "leaf0", Set: "2", Bytes: plotter.Values{3, 1, 0}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := f.Render(SVG)
	texts := svgTexts(t, b)
	for _, want := range []string{"0", "1", "2", "share of set flows (%)", "leaf0 set 2 (max/mean 2.25)"} {
		if !slices.Contains(texts, want) {
			t.Errorf("%q not among the SVG texts %q", want, texts)
		}
	}
}

func TestEmbedSVGFonts(t *testing.T) {
	plain, _ := DropsOverTime(sampleDrops(), Options{})
	embed, _ := DropsOverTime(sampleDrops(), Options{EmbedSVGFonts: true})
	a, _ := plain.Render(SVG)
	b, err := embed.Render(SVG)
	if err != nil {
		t.Fatal(err)
	}
	svgTexts(t, b)
	if bytes.Contains(a, []byte("@font-face")) || !bytes.Contains(b, []byte("@font-face")) {
		t.Errorf("@font-face: plain %v, embedded %v", bytes.Contains(a, []byte("@font-face")), bytes.Contains(b, []byte("@font-face")))
	}
}

// Tiny inputs (one bin, one sample, one member, one method, one point) still
// draw in both formats.
func TestDegenerateInputs(t *testing.T) {
	cases := map[string]func() (*Figure, error){
		"drops/1 bin": func() (*Figure, error) {
			return DropsOverTime(DropBins{BinWidth: units.Second, Reasons: []ReasonCounts{{Reason: "oversize", Counts: []float64{1}}}}, Options{})
		},
		"pfc/1 cell": func() (*Figure, error) {
			return PFCPauseTimeline(PauseGrid{BinWidth: units.Nanosecond, Rows: []PauseRow{{Node: "a", Paused: []float64{0.01}}}}, Options{})
		},
		"buffer/1 sample": func() (*Figure, error) {
			return BufferOccupancy(PoolOccupancy{Series: []PoolSeries{{Node: "a", Pool: "p", Samples: plotter.XYs{{X: 5e6, Y: 100}}}}}, Options{})
		},
		"ecmp/1 member": func() (*Figure, error) {
			return ECMPMemberLoad(ECMPLoad{Sets: []ECMPSet{{Node: "a", Set: "0", Members: []string{"p1"}, Bytes: plotter.Values{5}}}}, Options{})
		},
		"compare/1 method equal CI": func() (*Figure, error) {
			return HashComparison(Comparison{Metrics: []MetricCI{{Name: "Jain", Better: Higher, Values: []MethodValue{{Method: "crc32", Value: 1, Lo: 1, Hi: 1}}}}}, Options{})
		},
		"delay/1 point": func() (*Figure, error) {
			return DelayCDF([]DelayClass{{Label: "TC 0", CDF: plotter.XYs{{X: 1e7, Y: 1}}}}, Options{})
		},
		"delay/1 bucket from 0": func() (*Figure, error) {
			return DelayCDF([]DelayClass{{Label: "TC 0", Buckets: []DelayBucket{{Lo: 0, Hi: 1e6, Packets: 3}}}}, Options{})
		},
		"ecn/1 queue": func() (*Figure, error) {
			return ECNMarking(ECNMarks{Queues: []QueueMarks{{Node: "a", Marked: 1, Packets: 1}}}, Options{})
		},
		"ecn/1 bin": func() (*Figure, error) {
			return ECNMarking(ECNMarks{BinWidth: units.Millisecond, Marked: []float64{1}, Packets: []float64{4}}, Options{})
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			for _, format := range []Format{PNG, SVG} {
				if _, err := f.Render(format); err != nil {
					t.Errorf("%s: %v", format, err)
				}
			}
		})
	}
}

// Time axes read in a unit that suits the window and keeps labels short: a 3 ms
// window at 1 s reads 1000 to 1003 ms, not 1,000,000 us.
func TestAxisTimeScale(t *testing.T) {
	for _, c := range []struct {
		start, end float64
		unit       string
	}{
		{0, 3e9, "ms"},
		{0, 5e8, "us"},
		{1e12, 1.003e12, "ms"},
		{1e12, 1.0002e12, "ms"}, // 200 us at 1 s
		{2.6e8, 4.3e9, "ms"},
		{6e13, 6.0003e13, "s"},
		{0, 1.5e6, "ns"},
	} {
		if _, unit := axisTimeScale(c.start, c.end); unit != c.unit {
			t.Errorf("axisTimeScale(%g, %g) = %s, want %s", c.start, c.end, unit, c.unit)
		}
	}
	if got := timeAxisLabel("ms"); got != "time from start of run (ms)" {
		t.Errorf("label %q", got)
	}
}

// Counts in figure notes carry thousands separators.
func TestNoteThousands(t *testing.T) {
	var m ECNMarks
	for i := range 1500 {
		m.Queues = append(m.Queues, QueueMarks{Node: "leaf", Port: i, TC: 3, Marked: float64(1 + i%7), Packets: 10})
	}
	f, err := ECNMarking(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Note, "of 1,500 marking queues") {
		t.Errorf("note %q", f.Note)
	}
}

func TestTimePanels(t *testing.T) {
	var xs []float64
	for i := range 30 { // 3 ms at 1 s and 2 ms at 2 s, sampled every 100 us
		xs = append(xs, 1e12+float64(i)*1e8)
	}
	for i := range 20 {
		xs = append(xs, 2e12+float64(i)*1e8)
	}
	got := timePanels(xs, 3, 0)
	want := [][2]float64{{1e12, 1e12 + 29e8}, {2e12, 2e12 + 19e8}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("two bursts: %v, want %v", got, want)
	}
	// Steady activity: one panel.
	if got := timePanels(xs[:30], 3, 0); len(got) != 1 {
		t.Errorf("one burst: %v", got)
	}
	// Four bursts, at most three panels: the two closest merge.
	four := append(slices.Clone(xs), 5e12, 5.1e12+1e8)
	if got := timePanels(four, 3, 0); len(got) != 3 || got[2][0] != 5e12 {
		t.Errorf("four bursts: %v", got)
	}

	// The figure draws a panel per burst and says so.
	var a, b plotter.XYs
	for _, x := range xs {
		a = append(a, plotter.XY{X: x, Y: 1000})
		b = append(b, plotter.XY{X: x, Y: 500})
	}
	f, err := BufferOccupancy(PoolOccupancy{Series: []PoolSeries{{Node: "rack-p1-r3", Pool: "pool 0", Samples: a}, {Node: "fabric-p1-f3", Pool: "pool 0", Samples: b}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Note, "2 bursts") {
		t.Errorf("note %q", f.Note)
	}
	if _, err := f.Render(PNG); err != nil {
		t.Fatal(err)
	}
}

// Samples far apart are not joined by a line, and a lone sample gets a panel of its
// own, Join wide on each side, where it shows as a point: two pools each busy at one
// sample 10 ms apart are two panels, not two lines drawn across the gap.
func TestBufferLoneSamples(t *testing.T) {
	const period = 100 * units.Microsecond
	a := plotter.XYs{{X: 8.9e9, Y: 3070}, {X: 19.5e9, Y: 0}}
	b := plotter.XYs{{X: 8.9e9, Y: 0}, {X: 19.5e9, Y: 4610}}
	f, err := BufferOccupancy(PoolOccupancy{Join: period, Series: []PoolSeries{{Node: "rack-p0-r2", Pool: "pool 0", Samples: a}, {Node: "spine-s2-0", Pool: "pool 0", Samples: b}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Note, "2 bursts") {
		t.Errorf("note %q: want 2 bursts in 2 panels", f.Note)
	}
	if got := timePanels([]float64{8.9e9, 19.5e9}, 3, 10*float64(period)); len(got) != 2 {
		t.Errorf("panels %v, want 2", got)
	}
	if runs := joined(plotter.XYs{{X: 0}, {X: 1e8}, {X: 3e8}, {X: 4e8}}, float64(period)); len(runs) != 2 || len(runs[0]) != 2 || len(runs[1]) != 2 {
		t.Errorf("joined runs %v, want 2 runs of 2 (the 200 us gap is not joined)", runs)
	}
}
