package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tracefabric/tracefabric/internal/atomicfile"
)

// FigureDir is the directory, relative to the report, that holds the figure files
// (plots/NAME.png and plots/NAME.svg); report.md links them there.
const FigureDir = "plots"

// File names Save writes.
const (
	HTMLFile     = "report.html"
	MarkdownFile = "report.md"
)

// Report is the model of an analysis report: a title, headline sentences shown
// first, then sections. All text is plain text; the renderers escape it.
type Report struct {
	Title    string
	Subtitle string   // one line under the title, e.g. the run directories; optional
	Headline []string // the key sentences, shown at the top
	Sections []Section
}

// Section is a titled part of the report holding blocks in order.
type Section struct {
	Title string
	// ID is the HTML anchor; empty: derived from Title ("PFC pauses" -> "pfc-pauses").
	ID     string
	Blocks []Block
}

// Block is one element of a section. Exactly one field is set; the constructors
// ParagraphBlock, KeyValueBlock, TableBlock, FigureBlock and NoDataBlock make
// them.
type Block struct {
	Paragraph string
	KeyValues *KeyValues
	Table     *Table
	Figure    *Figure
	// NoData states that something had nothing to show ("No drops: every packet
	// was delivered."), in place of an empty figure or table.
	NoData string
}

// KeyValues is a small two-column table of named values.
type KeyValues struct {
	Caption string // optional
	Pairs   []KV
}

// KV is one named value, already formatted ("12,345", "1.5 ms").
type KV struct{ Key, Value string }

// Align is the alignment of a table column.
type Align int

const (
	AlignDefault Align = iota // right when every cell of the column is a number, else left
	AlignLeft
	AlignRight
)

// Table is a data table; cells are formatted text.
type Table struct {
	Caption string // optional
	Columns []string
	Rows    [][]string // each row has len(Columns) cells
	Align   []Align    // per column; missing entries mean AlignDefault
	// Source names the file holding the full table, e.g. "tables/drops_by_node.csv";
	// optional, shown under the table.
	Source string
	// Note says what was left out, e.g. "top 20 of 312 flows"; optional.
	Note string
}

// Figure is a figure drawn by package plots: report.html embeds PNG, report.md
// links plots/NAME.png.
type Figure struct {
	Name    string // file base name: lower case letters, digits, '_' and '-'
	Title   string // alt text and caption heading
	Caption string // optional sentence under the figure (e.g. plots.Figure.Note)
	PNG     []byte // PNG data, required for HTML
}

// ParagraphBlock is a paragraph of text.
func ParagraphBlock(text string) Block { return Block{Paragraph: text} }

// KeyValueBlock is a key-value table.
func KeyValueBlock(caption string, pairs ...KV) Block {
	return Block{KeyValues: &KeyValues{Caption: caption, Pairs: pairs}}
}

// TableBlock is a data table.
func TableBlock(t Table) Block { return Block{Table: &t} }

// FigureBlock is a figure.
func FigureBlock(f Figure) Block { return Block{Figure: &f} }

// NoDataBlock is a "nothing to show" note.
func NoDataBlock(text string) Block { return Block{NoData: text} }

// ErrInvalid is matched (errors.Is) by every validation error.
var ErrInvalid = errors.New("report: invalid report")

var figureName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// Validate checks the model: a title, one field per block, figure names usable
// as file names, tables with as many cells per row as columns, and (when
// needPNG) PNG data for every figure. Errors name the section and block.
func (r *Report) Validate(needPNG bool) error {
	if r == nil {
		return fmt.Errorf("%w: nil report", ErrInvalid)
	}
	if strings.TrimSpace(r.Title) == "" {
		return fmt.Errorf("%w: empty title", ErrInvalid)
	}
	names := map[string]string{}
	for si, s := range r.Sections {
		where := func(bi int) string { return fmt.Sprintf("section %d (%q) block %d", si+1, s.Title, bi+1) }
		if strings.TrimSpace(s.Title) == "" {
			return fmt.Errorf("%w: section %d has no title", ErrInvalid, si+1)
		}
		for bi, b := range s.Blocks {
			set := 0
			for _, ok := range []bool{b.Paragraph != "", b.KeyValues != nil, b.Table != nil, b.Figure != nil, b.NoData != ""} {
				if ok {
					set++
				}
			}
			if set != 1 {
				return fmt.Errorf("%w: %s: %d fields set, want exactly one", ErrInvalid, where(bi), set)
			}
			if t := b.Table; t != nil {
				if len(t.Columns) == 0 {
					return fmt.Errorf("%w: %s: table has no columns", ErrInvalid, where(bi))
				}
				if len(t.Align) > len(t.Columns) {
					return fmt.Errorf("%w: %s: %d alignments for %d columns", ErrInvalid, where(bi), len(t.Align), len(t.Columns))
				}
				for ri, row := range t.Rows {
					if len(row) != len(t.Columns) {
						return fmt.Errorf("%w: %s: table row %d has %d cells, want %d", ErrInvalid, where(bi), ri+1, len(row), len(t.Columns))
					}
				}
			}
			if f := b.Figure; f != nil {
				if !figureName.MatchString(f.Name) {
					return fmt.Errorf("%w: %s: figure name %q: want lower case letters, digits, '_' and '-'", ErrInvalid, where(bi), f.Name)
				}
				if prev, dup := names[f.Name]; dup {
					return fmt.Errorf("%w: %s: figure %q already appears in %s", ErrInvalid, where(bi), f.Name, prev)
				}
				names[f.Name] = where(bi)
				if needPNG && !bytes.HasPrefix(f.PNG, pngSignature) {
					return fmt.Errorf("%w: %s: figure %q has no PNG data to embed", ErrInvalid, where(bi), f.Name)
				}
			}
		}
	}
	return nil
}

// Figures returns the names of the figures in the report, in order.
func (r *Report) Figures() []string {
	var out []string
	for _, s := range r.Sections {
		for _, b := range s.Blocks {
			if b.Figure != nil {
				out = append(out, b.Figure.Name)
			}
		}
	}
	return out
}

// Save writes DIR/report.html and DIR/report.md, each under a temporary name
// renamed when complete.
func (r *Report) Save(dir string) error {
	var h, m bytes.Buffer
	if err := r.WriteHTML(&h); err != nil {
		return err
	}
	if err := r.WriteMarkdown(&m); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, HTMLFile), h.Bytes()); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, MarkdownFile), m.Bytes())
}

// sectionIDs returns an anchor per section: its ID, or a slug of its title made
// unique with -2, -3, ...
func (r *Report) sectionIDs() []string {
	seen := map[string]int{}
	ids := make([]string, len(r.Sections))
	for i, s := range r.Sections {
		id := s.ID
		if id == "" {
			id = slug(s.Title)
		}
		seen[id]++
		if n := seen[id]; n > 1 {
			id = fmt.Sprintf("%s-%d", id, n)
		}
		ids[i] = id
	}
	return ids
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimSuffix(b.String(), "-")
	if out == "" {
		return "section"
	}
	return out
}

// write renders into a buffer first, so a template error leaves w untouched.
func write(w io.Writer, render func(*bytes.Buffer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// numeric reports whether a cell reads as a number ("1,234", "-0.5", "58.9%",
// "1.5 ms"): it starts with a digit, or a sign or point followed by a digit.
func numeric(cell string) bool {
	c := strings.TrimSpace(cell)
	if c == "" {
		return false
	}
	if c[0] == '-' || c[0] == '+' || c[0] == '.' {
		c = c[1:]
	}
	return c != "" && c[0] >= '0' && c[0] <= '9'
}

// numericColumn reports whether column c has at least one cell and every
// non-empty cell is numeric.
func numericColumn(rows [][]string, c int) bool {
	seen := false
	for _, r := range rows {
		if strings.TrimSpace(r[c]) == "" {
			continue
		}
		if !numeric(r[c]) {
			return false
		}
		seen = true
	}
	return seen
}
