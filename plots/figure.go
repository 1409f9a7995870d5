package plots

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"path/filepath"

	"github.com/tracefabric/tracefabric/internal/atomicfile"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure names, used as file base names (plots/NAME.png, plots/NAME.svg).
const (
	NameDropsOverTime    = "drops_over_time"
	NamePFCPauseTimeline = "pfc_pause_timeline"
	NameBufferOccupancy  = "buffer_occupancy"
	NameECMPMemberLoad   = "ecmp_member_load"
	NameHashComparison   = "hash_comparison"
	NameDelayCDF         = "delay_cdf"
	NameECNMarking       = "ecn_marking"
	NameFCTSlowdown      = "fct_slowdown"
	NameCNPOverTime      = "cnp_over_time"
	NameFabric           = "fabric"
	NameFabricHeat       = "fabric_heat"
)

// ErrNoData is matched (errors.Is) by the error a figure constructor returns when
// its input has nothing to draw. The report then states the reason instead of
// showing empty axes.
var ErrNoData = errors.New("plots: no data to draw")

// NoDataError says which figure had nothing to draw and why, in words fit for a
// report ("no drops", "no PFC pauses"). It matches ErrNoData.
type NoDataError struct {
	Figure string // figure name, e.g. "drops_over_time"
	Reason string // short statement, e.g. "no drops"
}

func (e *NoDataError) Error() string {
	return fmt.Sprintf("plots: %s: no data to draw: %s", e.Figure, e.Reason)
}

// Is reports whether target is ErrNoData.
func (e *NoDataError) Is(target error) bool { return target == ErrNoData }

func noData(figure, reason string) error {
	return &NoDataError{Figure: figure, Reason: reason}
}

// Default page size and resolution of a figure.
const (
	DefaultWidth  = 8 * vg.Inch
	DefaultHeight = 4.5 * vg.Inch
	DefaultDPI    = 144
)

// Options sets the page of a figure. The zero value means the defaults.
type Options struct {
	// Width and Height of the page. Zero: DefaultWidth x DefaultHeight. Figures
	// with many rows (the pause heatmap) grow taller than Height when needed.
	Width, Height vg.Length
	// DPI is the resolution of the PNG rendering in dots per inch (the SVG is
	// resolution independent). Zero: DefaultDPI.
	DPI int
	// EmbedSVGFonts embeds the Liberation fonts in the SVG (about 400 KB more per
	// file) so it looks the same on machines without them; otherwise the SVG
	// names the fonts and viewers substitute a similar one.
	EmbedSVGFonts bool
}

func (o Options) withDefaults() Options {
	if o.Width <= 0 {
		o.Width = DefaultWidth
	}
	if o.Height <= 0 {
		o.Height = DefaultHeight
	}
	if o.DPI <= 0 {
		o.DPI = DefaultDPI
	}
	return o
}

// Format is an output format of a figure.
type Format string

// Output formats.
const (
	PNG Format = "png"
	SVG Format = "svg"
)

// Figure is a drawn figure, ready to be rendered as PNG or SVG.
type Figure struct {
	// Name is the file base name ("drops_over_time").
	Name string
	// Title is the figure's title as drawn on it.
	Title string
	// Note says what was left out, e.g. "top 40 of 312 paused port-classes";
	// empty when everything is shown. It is also drawn under the title.
	Note string
	// Width and Height of the page; DPI of the PNG rendering.
	Width, Height vg.Length
	DPI           int
	EmbedSVGFonts bool

	draw func(dc draw.Canvas)
}

// Render draws the figure in the given format.
func (f *Figure) Render(format Format) ([]byte, error) {
	var buf bytes.Buffer
	if err := f.Encode(&buf, format); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Encode draws the figure in the given format to w.
func (f *Figure) Encode(w io.Writer, format Format) (err error) {
	if f == nil || f.draw == nil {
		return errors.New("plots: nil figure")
	}
	// gonum/plot panics on some inconsistent inputs; constructors validate, but a
	// panic must not escape a library.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plots: drawing %s: %v", f.Name, r)
		}
	}()
	var wt io.WriterTo
	switch format {
	case PNG:
		c := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(f.DPI),
			vgimg.UseBackgroundColor(color.White))
		f.drawOn(c)
		wt = vgimg.PngCanvas{Canvas: c}
	case SVG:
		c := vgsvg.NewWith(vgsvg.UseWH(f.Width, f.Height), vgsvg.EmbedFonts(f.EmbedSVGFonts))
		f.drawOn(c)
		wt = c
	default:
		return fmt.Errorf("plots: %s: unknown format %q (want png or svg)", f.Name, format)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("plots: writing %s.%s: %w", f.Name, format, err)
	}
	return nil
}

func (f *Figure) drawOn(c vg.CanvasSizer) {
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	f.draw(dc)
}

// Files are the paths a figure was saved to, and its PNG bytes (for embedding
// in a report).
type Files struct {
	PNG, SVG string
	PNGData  []byte
}

// Save writes DIR/NAME.png and DIR/NAME.svg. Each file is written under a
// temporary name in dir and renamed when complete, so an interrupted save never
// leaves a file that looks complete.
func (f *Figure) Save(dir string) (Files, error) {
	png, err := f.Render(PNG)
	if err != nil {
		return Files{}, err
	}
	svg, err := f.Render(SVG)
	if err != nil {
		return Files{}, err
	}
	out := Files{
		PNG:     filepath.Join(dir, f.Name+".png"),
		SVG:     filepath.Join(dir, f.Name+".svg"),
		PNGData: png,
	}
	if err := atomicfile.WriteFile(out.PNG, png); err != nil {
		return Files{}, err
	}
	if err := atomicfile.WriteFile(out.SVG, svg); err != nil {
		return Files{}, err
	}
	return out, nil
}
