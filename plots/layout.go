package plots

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// page lays out a figure: a title, an optional note line under it, a grid of
// panels (aligned so their data areas line up), and an optional strip at the right
// holding a legend (with its own heading) and/or a colour bar.
type page struct {
	title string
	note  string
	grid  [][]*plot.Plot // rows x cols; nil cells stay empty

	legend      *plot.Legend // drawn in the right strip when not nil
	legendTitle string

	// side draws extra content (a colour bar) in the right strip; data is the data
	// area of the first panel, for vertical alignment. sideWidth reserves room.
	side      func(strip, data draw.Canvas)
	sideWidth vg.Length
}

var (
	pageMargin = vg.Points(10)
	stripGap   = vg.Points(12)
)

func (pg *page) figure(name string, o Options) *Figure {
	return &Figure{
		Name:   name,
		Title:  pg.title,
		Note:   pg.note,
		Width:  o.Width,
		Height: o.Height,
		DPI:    o.DPI,
		draw:   pg.draw,

		EmbedSVGFonts: o.EmbedSVGFonts,
	}
}

func (pg *page) draw(dc draw.Canvas) {
	dc = draw.Crop(dc, pageMargin, -pageMargin, pageMargin, -pageMargin)
	top := dc.Max.Y
	midX := (dc.Min.X + dc.Max.X) / 2
	if pg.title != "" {
		sty := textStyle(fontSansBold, sizeTitle, colorText)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: midX, Y: top}, pg.title)
		top -= sty.Height(pg.title) + vg.Points(3)
	}
	if pg.note != "" {
		sty := textStyle(fontSansIt, sizeNote, colorNote)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: midX, Y: top}, pg.note)
		top -= sty.Height(pg.note) + vg.Points(2)
	}
	body := dc
	body.Max.Y = top - vg.Points(4)

	// Right strip.
	var stripW vg.Length
	var legendHead vg.Length
	headSty := textStyle(fontSansBold, sizeLegend, colorText)
	headSty.XAlign, headSty.YAlign = draw.XLeft, draw.YTop
	if pg.legend != nil {
		r := pg.legend.Rectangle(body)
		stripW = r.Max.X - r.Min.X
		if pg.legendTitle != "" {
			stripW = max(stripW, headSty.Width(pg.legendTitle))
			legendHead = headSty.Height(pg.legendTitle) + vg.Points(4)
		}
	}
	stripW = max(stripW, pg.sideWidth)
	main := body
	if stripW > 0 {
		main.Max.X -= stripW + stripGap
	}

	rows := len(pg.grid)
	if rows == 0 {
		return
	}
	cols := len(pg.grid[0])
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(16), PadY: vg.Points(12)}
	cs := plot.Align(pg.grid, tiles, main)
	var firstData draw.Canvas
	found := false
	for j, row := range pg.grid {
		for i, p := range row {
			if p == nil {
				continue
			}
			p.Draw(cs[j][i])
			if !found {
				firstData = p.DataCanvas(cs[j][i])
				found = true
			}
		}
	}
	if stripW == 0 || !found {
		return
	}
	strip := body
	strip.Min.X = main.Max.X + stripGap
	strip.Max.Y = firstData.Max.Y
	if pg.legend != nil {
		if pg.legendTitle != "" {
			dc.FillText(headSty, vg.Point{X: strip.Min.X, Y: strip.Max.Y}, pg.legendTitle)
		}
		lc := strip
		lc.Max.Y -= legendHead
		pg.legend.Draw(lc)
	}
	if pg.side != nil {
		pg.side(strip, firstData)
	}
}
