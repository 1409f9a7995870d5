package report

import (
	"bytes"
	"encoding/base64"
	"errors"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/report_golden.html and .md")

// Two small real PNGs, as fixed bytes so the golden files do not depend on the
// Go version's PNG encoder.
var (
	redPNG  = mustB64("iVBORw0KGgoAAAANSUhEUgAAAAQAAAADCAIAAAA7ljmRAAAAGElEQVR4nGI5ISfHAANMDEgAhQMIAAD//ydPAQ24eUVOAAAAAElFTkSuQmCC")
	bluePNG = mustB64("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAF0lEQVR4nGKRkzvBwMDAxAAGgAAAAP//C9oBC2zZs9AAAAAASUVORK5CYII=")
)

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		panic(err)
	}
	return b
}

const hostile = `<script>alert("x")</script>&amp;|*_[x](javascript:alert(1))<img src="x">`

func sampleReport(t testing.TB) *Report {
	return &Report{
		Title:    "tracefabric analysis: demo",
		Subtitle: "run: out/demo (hash crc32, seed 1)",
		Headline: []string{
			"1,234 packets dropped, 12 of them lossless (headroom): a sizing failure.",
			"2 PFC storms; the longest lasted 1.8 ms and reached depth 3.",
			"Node " + hostile + " paused most.",
		},
		Sections: []Section{
			{Title: "Drops", Blocks: []Block{
				ParagraphBlock("Drops by reason, over time and by node."),
				KeyValueBlock("Totals", KV{"dropped packets", "1,234"}, KV{"lossless (headroom)", "12"}, KV{hostile, "1|2"}),
				FigureBlock(Figure{Name: "drops_over_time", Title: "Drops over time by reason",
					Caption: "1,234 dropped packets; bin = 100 us", PNG: redPNG}),
				TableBlock(Table{Caption: "Drops by node", Columns: []string{"node", "tier", "drops"},
					Rows:   [][]string{{"leaf0", "rack", "1,000"}, {hostile, "fabric", "234"}},
					Source: "tables/drops_by_node.csv", Note: "top 2 of 2 nodes"}),
			}},
			{Title: "PFC pauses", Blocks: []Block{
				NoDataBlock("No PFC pauses: no port-class was paused."),
			}},
			{Title: "ECMP <imbalance>", Blocks: []Block{
				FigureBlock(Figure{Name: "ecmp_member_load", Title: "Member shares " + hostile,
					PNG: bluePNG}),
			}},
			{Title: "Drops", Blocks: []Block{ParagraphBlock("1. not a list")}},
		},
	}
}

func render(t *testing.T, r *Report) (html, md string) {
	t.Helper()
	var h, m bytes.Buffer
	if err := r.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMarkdown(&m); err != nil {
		t.Fatal(err)
	}
	return h.String(), m.String()
}

func TestGoldenReports(t *testing.T) {
	html, md := render(t, sampleReport(t))
	for name, got := range map[string]string{"report_golden.html": html, "report_golden.md": md} {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run TestGoldenReports -update creates it)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs from the golden file (go test -run TestGoldenReports -update to accept)\n%s", name, got)
		}
	}
}

func TestDeterministic(t *testing.T) {
	h1, m1 := render(t, sampleReport(t))
	h2, m2 := render(t, sampleReport(t))
	if h1 != h2 || m1 != m2 {
		t.Error("two renderings of the same report differ")
	}
}

// The HTML page needs nothing from outside: no scripts, no stylesheets or fonts
// to fetch, every src a data: URI, and every figure embedded with its exact PNG.
func TestHTMLSelfContained(t *testing.T) {
	r := sampleReport(t)
	html, _ := render(t, r)
	lower := strings.ToLower(html)
	for _, bad := range []string{"<script", "<link", "<iframe", "<object", "<embed", "@import", "url(", "http://", "https://", "javascript:alert(1)\""} {
		if strings.Contains(lower, bad) {
			i := strings.Index(lower, bad)
			t.Errorf("HTML contains %q: ...%s...", bad, html[max(0, i-60):min(len(html), i+60)])
		}
	}
	srcs := regexp.MustCompile(`(?i)\ssrc\s*=\s*"([^"]*)"`).FindAllStringSubmatch(html, -1)
	if len(srcs) != 2 {
		t.Fatalf("%d src attributes, want 2 (one per figure)", len(srcs))
	}
	var want [][]byte
	for _, s := range r.Sections {
		for _, b := range s.Blocks {
			if b.Figure != nil {
				want = append(want, b.Figure.PNG)
			}
		}
	}
	for i, m := range srcs {
		data, ok := strings.CutPrefix(m[1], "data:image/png;base64,")
		if !ok {
			t.Errorf("src %d = %.60q, want a PNG data URI", i, m[1])
			continue
		}
		got, err := base64.StdEncoding.DecodeString(data)
		if err != nil || !bytes.Equal(got, want[i]) {
			t.Errorf("src %d does not decode to figure %d's PNG (err %v)", i, i, err)
		}
	}
	for _, name := range r.Figures() {
		if !strings.Contains(html, `id="fig-`+name+`"`) || !strings.Contains(html, "plots/"+name+".png") {
			t.Errorf("figure %s not referenced in the HTML", name)
		}
	}
	// Only in-page links.
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(html, -1) {
		if !strings.HasPrefix(m[1], "#") {
			t.Errorf("link %q leaves the page", m[1])
		}
	}
}

func TestHTMLEscapesText(t *testing.T) {
	html, _ := render(t, sampleReport(t))
	if strings.Contains(html, `<script>alert`) {
		t.Error("raw <script> in the HTML")
	}
	// The hostile string appears, escaped, in the headline, a key, a table cell
	// and a figure title (alt attribute and caption).
	esc := `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;amp;|*_[x](javascript:alert(1))&lt;img src=&#34;x&#34;&gt;`
	if n := strings.Count(html, esc); n != 5 {
		t.Errorf("escaped hostile text found %d times, want 5", n)
	}
	if !strings.Contains(html, "<h2>ECMP &lt;imbalance&gt;</h2>") {
		t.Error("section title not escaped")
	}
}

func TestMarkdown(t *testing.T) {
	r := sampleReport(t)
	_, md := render(t, r)
	for _, name := range r.Figures() {
		if !regexp.MustCompile(`!\[[^\n]*\]\(plots/` + name + `\.png\)`).MatchString(md) {
			t.Errorf("figure %s not linked as plots/%s.png", name, name)
		}
	}
	if regexp.MustCompile(`(^|[^\\])<`).MatchString(md) {
		t.Error("an unescaped '<' (raw HTML) in the Markdown")
	}
	if !strings.Contains(md, `\<script>alert("x")\</script>\&amp;\|\*\_\[x\](javascript:alert(1))\<img src="x">`) {
		t.Errorf("hostile text not escaped as expected:\n%s", md)
	}
	if !strings.Contains(md, "\n1\\. not a list\n") {
		t.Error("a paragraph starting with '1.' is not escaped")
	}
	// Every table line has as many unescaped pipes as its header.
	lines := strings.Split(md, "\n")
	pipes := regexp.MustCompile(`(^|[^\\])\|`)
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") {
			continue
		}
		n := len(pipes.FindAllString(lines[i], -1))
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|") {
			i++
			if m := len(pipes.FindAllString(lines[i], -1)); m != n {
				t.Errorf("line %d %q has %d cell separators, header has %d", i+1, lines[i], m, n)
			}
		}
	}
	if !strings.HasPrefix(md, "# tracefabric analysis: demo\n") {
		t.Errorf("md starts %q", md[:40])
	}
}

func TestMDEscape(t *testing.T) {
	cases := map[string]string{
		"plain 1.5 ms":  "plain 1.5 ms",
		"a|b":           `a\|b`,
		"# not heading": `\# not heading`,
		"- not a list":  `\- not a list`,
		"> not a quote": `\> not a quote`,
		"depth >= 2":    "depth >= 2",
		"12. nope":      `12\. nope`,
		"3) nope":       `3\) nope`,
		"7.":            `7\.`,
		"49.3 MB":       "49.3 MB",
		"10.0.3.5":      "10.0.3.5",
		"1000.119 ms":   "1000.119 ms",
		"1234567890. x": "1234567890. x", // ten digits start no list
		"x-y":           "x-y",
		"two\nlines":    "two lines",
		"`code`":        "\\`code\\`",
		"back\\slash":   `back\\slash`,
		"":              "",
	}
	for in, want := range cases {
		if got := mdEscape(in); got != want {
			t.Errorf("mdEscape(%q) = %q, want %q", in, got, want)
		}
	}
}

// Table cells are inline content: only pipes and inline markup are escaped, never a
// cell's first character (an address, a size, a leading '-' or '#').
func TestMDCells(t *testing.T) {
	cases := map[string]string{
		"10.0.3.5":     "10.0.3.5",
		"49.3 MB":      "49.3 MB",
		"1. x":         "1. x",
		"- x":          "- x",
		"#3":           "#3",
		"> 2":          "> 2",
		"a|b":          `a\|b`,
		"*x*":          `\*x\*`,
		"<b>":          `\<b>`,
		"rack-p0-r0":   "rack-p0-r0",
		"2,995.004 ms": "2,995.004 ms",
	}
	for in, want := range cases {
		if got, row := mdInline(in), mdRow([]string{in}); got != want || row != "| "+want+" |" {
			t.Errorf("cell %q: mdInline %q, row %q, want %q", in, got, row, want)
		}
	}
	// End to end: a table of addresses and sizes renders them as they are.
	r := &Report{Title: "t", Sections: []Section{{Title: "Flows", Blocks: []Block{
		TableBlock(Table{Columns: []string{"src", "bytes"}, Rows: [][]string{{"10.0.3.5", "49.3 MB"}}}),
	}}}}
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| 10.0.3.5 | 49.3 MB |") {
		t.Errorf("table row escaped:\n%s", b.String())
	}
}

func TestSectionIDs(t *testing.T) {
	r := sampleReport(t)
	got := r.sectionIDs()
	want := []string{"drops", "pfc-pauses", "ecmp-imbalance", "drops-2"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ids = %v, want %v", got, want)
	}
}

func TestValidate(t *testing.T) {
	png := redPNG
	cases := []struct {
		name, want string
		r          Report
		needPNG    bool
	}{
		{"no title", "empty title", Report{}, false},
		{"untitled section", "section 1 has no title", Report{Title: "x", Sections: []Section{{}}}, false},
		{"empty block", "block 1: 0 fields set", Report{Title: "x", Sections: []Section{{Title: "s", Blocks: []Block{{}}}}}, false},
		{"two fields", "block 2: 2 fields set", Report{Title: "x", Sections: []Section{{Title: "s", Blocks: []Block{
			ParagraphBlock("ok"), {Paragraph: "p", NoData: "n"}}}}}, false},
		{"bad figure name", `figure name "../etc"`, Report{Title: "x", Sections: []Section{{Title: "s", Blocks: []Block{
			FigureBlock(Figure{Name: "../etc", PNG: png})}}}}, false},
		{"duplicate figure", `figure "a" already appears`, Report{Title: "x", Sections: []Section{{Title: "s", Blocks: []Block{
			FigureBlock(Figure{Name: "a", PNG: png}), FigureBlock(Figure{Name: "a", PNG: png})}}}}, false},
		{"no png", `figure "a" has no PNG data`, Report{Title: "x", Sections: []Section{{Title: "s", Blocks: []Block{
			FigureBlock(Figure{Name: "a", PNG: []byte("GIF89a")})}}}}, true},
		{"ragged table", "table row 2 has 1 cells, want 2", Report{Title: "x", Sections: []Section{{Title: "s", Blocks: []Block{
			TableBlock(Table{Columns: []string{"a", "b"}, Rows: [][]string{{"1", "2"}, {"3"}}})}}}}, false},
		{"no columns", "table has no columns", Report{Title: "x", Sections: []Section{{Title: "s", Blocks: []Block{
			TableBlock(Table{})}}}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.r.Validate(tc.needPNG)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
	// Markdown does not need PNG data; HTML does, and writes nothing on error.
	r := Report{Title: "x", Sections: []Section{{Title: "s", Blocks: []Block{FigureBlock(Figure{Name: "a"})}}}}
	if err := r.WriteMarkdown(&bytes.Buffer{}); err != nil {
		t.Errorf("markdown without PNG: %v", err)
	}
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err == nil || buf.Len() != 0 {
		t.Errorf("HTML without PNG: err %v, %d bytes written", err, buf.Len())
	}
}

func TestSave(t *testing.T) {
	dir := t.TempDir()
	r := sampleReport(t)
	if err := r.Save(dir); err != nil {
		t.Fatal(err)
	}
	html, md := render(t, r)
	for name, want := range map[string]string{HTMLFile: html, MarkdownFile: md} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: err %v, content matches %v", name, err, string(got) == want)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("%d files in the directory, want 2 (no temporary files)", len(ents))
	}
	if err := r.Save(filepath.Join(dir, "missing")); err == nil {
		t.Error("saved into a missing directory")
	}
}

func TestDefaultAlignment(t *testing.T) {
	tb := Table{Columns: []string{"node", "drops", "share", "note", "mixed"}, Rows: [][]string{
		{"leaf0", "1,234", "58.9%", "", "12"},
		{"spine1", "-5", ".5 %", "", "n/a"},
	}, Align: []Align{AlignRight}}
	r := &Report{Title: "t", Sections: []Section{{Title: "s", Blocks: []Block{TableBlock(tb)}}}}
	got := r.view(false).Sections[0].Blocks[0].Aligns
	want := []string{"r", "r", "r", "l", "l"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("aligns = %v, want %v", got, want)
	}
}
