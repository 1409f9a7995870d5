package plots

import (
	"image/color"
	"math"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette/brewer"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	xfont "golang.org/x/image/font"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Text sizes, in points.
const (
	sizeTitle      = 14
	sizeNote       = 10
	sizePanelTitle = 11
	sizeAxisLabel  = 11
	sizeTick       = 9
	sizeLegend     = 10
)

var (
	fontSans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	fontSansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
	fontSansIt   = font.Font{Typeface: "Liberation", Variant: "Sans", Style: xfont.StyleItalic}

	colorText = color.Gray{Y: 0x20}
	colorNote = color.Gray{Y: 0x55}
	colorGrid = color.Gray{Y: 0xe0}
	colorRef  = color.Gray{Y: 0x40}
)

// textHandler is the plain text handler used for all figure text.
func textHandler() text.Handler { return plot.DefaultTextHandler }

func textStyle(f font.Font, size vg.Length, c color.Color) text.Style {
	return text.Style{
		Color:   c,
		Font:    font.From(f, size),
		Handler: textHandler(),
	}
}

// newPlot returns a plot styled for the figures: sans-serif text at readable
// sizes, light grid lines added by the caller where they help.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle = textStyle(fontSansBold, sizePanelTitle, colorText)
	p.Title.TextStyle.XAlign = draw.XCenter
	p.Title.TextStyle.YAlign = draw.YTop
	p.Title.Padding = vg.Points(4)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle = textStyle(fontSans, sizeAxisLabel, colorText)
		ax.Label.Padding = vg.Points(4)
		ax.Tick.Label = textStyle(fontSans, sizeTick, colorText)
		ax.Padding = vg.Points(2)
	}
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XCenter, draw.YTop
	p.Y.Tick.Label.XAlign, p.Y.Tick.Label.YAlign = draw.XRight, draw.YCenter
	p.X.Label.TextStyle.XAlign, p.X.Label.TextStyle.YAlign = draw.XCenter, draw.YBottom
	p.Y.Label.TextStyle.XAlign, p.Y.Label.TextStyle.YAlign = draw.XCenter, draw.YBottom
	p.X.Tick.Marker = niceTicks{n: 7}
	p.Y.Tick.Marker = niceTicks{n: 6}
	p.Legend = newLegend()
	return p
}

func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle = textStyle(fontSans, sizeLegend, colorText)
	l.Left = true
	l.Top = true
	l.ThumbnailWidth = vg.Points(18)
	l.Padding = vg.Points(2)
	return l
}

// seriesColors is a qualitative palette (ColorBrewer Dark2 followed by Set1),
// distinguishable on screen and in print.
var seriesColors = sync.OnceValue(func() []color.Color {
	var out []color.Color
	for _, name := range []string{"Dark2", "Set1"} {
		p, err := brewer.GetPalette(brewer.TypeQualitative, name, 8)
		if err != nil {
			panic(err) // a fixed, known palette
		}
		out = append(out, p.Colors()...)
	}
	// Set1's yellow (index 5) is unreadable as a line on white.
	return append(out[:13:13], out[14:]...)
})

func seriesColor(i int) color.Color {
	cs := seriesColors()
	return cs[i%len(cs)]
}

// dashes give a second channel when there are more series than colours.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
}

func seriesDash(i int) []vg.Length {
	return dashes[(i/len(seriesColors()))%len(dashes)]
}

// gridLines draws light horizontal (and optionally vertical) grid lines behind the
// data.
func gridLines(p *plot.Plot, vertical bool) {
	g := plotter.NewGrid()
	g.Horizontal.Color = colorGrid
	g.Vertical.Color = colorGrid
	if !vertical {
		g.Vertical.Color = nil
	}
	p.Add(g)
}

// ---- text that survives the embedded fonts ----

var sansFace = sync.OnceValue(func() *sfnt.Font {
	f := font.DefaultCache.Lookup(font.From(fontSans, 10), 10)
	return f.Face
})

// safeText returns s with every character that Liberation Sans cannot draw
// replaced by '?' (such characters would silently disappear from the PNG), control
// characters removed, and the result cut to max runes with "..." when longer
// (max <= 0: no limit).
func safeText(s string, max int) string {
	f := sansFace()
	var buf sfnt.Buffer
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 || r == 0x7f {
			if r == '\n' || r == '\t' || r == '\r' {
				r = ' '
			} else {
				r = '?'
			}
		} else if r != ' ' {
			if gi, err := f.GlyphIndex(&buf, r); err != nil || gi == 0 {
				r = '?'
			}
		}
		if max > 0 && n == max {
			s := b.String()
			rs := []rune(s)
			if len(rs) > 3 {
				rs = rs[:len(rs)-3]
			}
			return string(rs) + "..."
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// ---- unit scaling for axes ----

// axisTimeScale picks the unit of a time axis from start to end (ps of simulated
// time): the unit that suits the span shown (timeScale), or a larger one when the
// labels would otherwise need more than four integer digits (a 3 ms window at 2 s
// reads 2000 to 2003 ms, not 2000000 us).
func axisTimeScale(start, end float64) (div float64, unit string) {
	div, unit = units.TimeScale(end - start)
	for _, u := range []struct {
		div  float64
		unit string
	}{{1e6, "us"}, {1e9, "ms"}, {1e12, "s"}} {
		if u.div > div && math.Abs(end)/div >= 1e4 {
			div, unit = u.div, u.unit
		}
	}
	return div, unit
}

// timeAxisLabel is the label of a time axis in unit: simulated time since the run's
// first packet.
func timeAxisLabel(unit string) string { return "time from start of run (" + unit + ")" }

// finite reports whether v is a usable number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
