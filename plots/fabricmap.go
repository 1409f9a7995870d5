package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/brewer"
	"gonum.org/v1/plot/palette/moreland"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tracefabric/tracefabric/fabric"
	"github.com/tracefabric/tracefabric/internal/units"
)

// LinkHeat colours a fabric picture (the analyze report's heat map,
// docs/analysis.md#run-and-fabric): per link id its utilization (0..1, the busier
// direction's transmitted wire bits over speed x simulated time) and the packets
// dropped at its two ports.
type LinkHeat struct {
	Utilization []float64 // by link id
	Drops       []int64   // by link id
}

// Of is what the picture draws for one of its lines: the utilization of its busiest
// link and the drops of all its links.
func (h *LinkHeat) Of(l fabric.PictureLink) (util float64, drops int64) {
	for _, id := range l.Links {
		if int(id) < len(h.Utilization) {
			util = max(util, h.Utilization[id])
		}
		if int(id) < len(h.Drops) {
			drops += h.Drops[id]
		}
	}
	return util, drops
}

// heatColors is pauseColors' scale (light yellow to dark red) from 0 to top %.
func heatColors(top float64) (palette.ColorMap, error) {
	p, err := brewer.GetPalette(brewer.TypeSequential, "YlOrRd", 9)
	if err != nil {
		return nil, err
	}
	cs := slices.Clone(p.Colors()[1:])
	slices.Reverse(cs)
	cm, err := moreland.NewLuminance(cs)
	if err != nil {
		return nil, err
	}
	cm = palette.Reverse(cm)
	cm.SetMin(0)
	cm.SetMax(max(top, 1e-9))
	return cm, nil
}

// niceCeil rounds v (> 0) up to 1, 2 or 5 times a power of ten; 100 at most.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= v {
			return math.Min(100, m*e)
		}
	}
	return 100
}

// FabricMap draws the fabric by layers (docs/topology.md#picture): host groups (one
// box per rack) at the bottom, then each switch level, links as lines whose width
// grows with the speed of one link (line labelled "xN" for N parallel or grouped
// links). With heat, lines are coloured by their busiest link's utilization (the
// colour bar from 0 to the busiest link's, rounded up to 1, 2 or 5 x 10^k %) and a
// red disc, its area growing with the count, marks the links that dropped.
func FabricMap(p fabric.Picture, heat *LinkHeat, o Options) (*Figure, error) {
	o = o.withDefaults()
	if len(p.Layers) == 0 || len(p.Layers[0]) == 0 {
		return nil, noData("fabric_map", "the fabric has no hosts")
	}
	widest := 0
	for _, l := range p.Layers {
		widest = max(widest, len(l))
	}
	title := "Fabric: " + p.Shape
	note := "hosts grouped per rack; line width by link speed"
	name := NameFabric
	if heat != nil {
		title = "Where the trace loaded the fabric: " + p.Shape
		note = "line colour: busiest link's mean utilization over the run (wire bits / speed x time); red disc: drops at the link's ports"
		name = NameFabricHeat
	}
	if o.Width == DefaultWidth && widest > 24 {
		o.Width = vg.Length(math.Min(float64(widest)*0.33, 60)) * vg.Inch
	}
	var cm interface {
		At(float64) (color.Color, error)
	}
	var scale float64 // the colour bar's top, in %: the busiest link's utilization rounded up
	var bar palette.ColorMap
	if heat != nil {
		top := 0.0
		for _, u := range heat.Utilization {
			top = max(top, u)
		}
		scale = niceCeil(100 * top)
		c, err := heatColors(scale)
		if err != nil {
			return nil, err
		}
		cm, bar = c, c
	}
	maxSpeed := int64(1)
	for _, l := range p.Links {
		maxSpeed = max(maxSpeed, l.Speed/int64(len(l.Links)))
	}
	pg := &page{title: title, note: note}
	f := pg.figure(name, o)
	f.draw = func(dc draw.Canvas) {
		pg.draw(dc) // title and note
		dc = draw.Crop(dc, pageMargin+vg.Points(90), -pageMargin-vg.Points(20), pageMargin+vg.Points(20), -pageMargin-vg.Points(56))
		if heat != nil {
			dc.Max.X -= vg.Points(60)
		}
		w, h := dc.Max.X-dc.Min.X, dc.Max.Y-dc.Min.Y
		nl := len(p.Layers)
		pos := func(b [2]int) vg.Point {
			n := len(p.Layers[b[0]])
			x := dc.Min.X + w*vg.Length(float64(b[1])+0.5)/vg.Length(n)
			y := dc.Min.Y + h*vg.Length(b[0])/vg.Length(max(nl-1, 1))
			return vg.Point{X: x, Y: y}
		}
		// Links first, under the boxes.
		for _, l := range p.Links {
			per := l.Speed / int64(len(l.Links))
			lw := vg.Points(0.6 + 3.4*float64(per)/float64(maxSpeed))
			col := color.Color(color.Gray{Y: 0x90})
			util, drops := 0.0, int64(0)
			if heat != nil {
				util, drops = heat.Of(l)
				col = color.Gray{Y: 0xd8}
				if util > 0 {
					if c, err := cm.At(math.Min(scale, 100*util)); err == nil {
						col = c
					}
				}
			}
			a, b := pos(l.A), pos(l.B)
			dc.StrokeLine2(draw.LineStyle{Color: col, Width: lw}, a.X, a.Y, b.X, b.Y)
			mid := vg.Point{X: (a.X + b.X) / 2, Y: (a.Y + b.Y) / 2}
			if len(l.Links) > 1 && l.A[0] > 0 && widest <= 24 {
				sty := textStyle(fontSans, sizeTick-1, colorNote)
				dc.FillText(sty, mid, fmt.Sprintf("x%d", len(l.Links)))
			}
			if drops > 0 {
				r := vg.Points(2 + 1.5*math.Log10(float64(drops)+1))
				dc.SetColor(color.RGBA{R: 0xd0, A: 0xff})
				var c vg.Path
				c.Move(vg.Point{X: mid.X + r, Y: mid.Y})
				c.Arc(mid, r, 0, 2*math.Pi)
				c.Close()
				dc.Fill(c)
			}
		}
		// Boxes and labels.
		for li, layer := range p.Layers {
			bw := min(vg.Points(70), w/vg.Length(len(layer))*0.85)
			bh := vg.Points(14)
			for i, n := range layer {
				c := pos([2]int{li, i})
				r := vg.Rectangle{Min: vg.Point{X: c.X - bw/2, Y: c.Y - bh/2}, Max: vg.Point{X: c.X + bw/2, Y: c.Y + bh/2}}
				fill := color.Color(color.RGBA{R: 0xdd, G: 0xe8, B: 0xf4, A: 0xff})
				if li == 0 {
					fill = color.RGBA{R: 0xee, G: 0xee, B: 0xe0, A: 0xff}
				}
				dc.SetColor(fill)
				dc.Fill(r.Path())
				dc.SetLineStyle(draw.LineStyle{Color: colorRef, Width: vg.Points(0.5)})
				dc.Stroke(r.Path())
				sty := textStyle(fontSans, sizeTick-1, colorText)
				sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
				if label := safeText(n.Label, 18); sty.Width(label) <= bw {
					dc.FillText(sty, c, label)
				}
			}
			// The layer's role(s) at the left.
			roles := ""
			for _, n := range layer {
				if roles == "" {
					roles = n.Role
				} else if n.Role != roles && roles[len(roles)-1] != '+' {
					roles += "+"
				}
			}
			sty := textStyle(fontSansBold, sizeTick, colorText)
			sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
			y := pos([2]int{li, 0}).Y
			label := fmt.Sprintf("%s (%d)", safeText(roles, 14), len(layer))
			if li == 0 {
				label = fmt.Sprintf("hosts (%d racks)", len(layer))
			}
			dc.FillText(sty, vg.Point{X: dc.Min.X - vg.Points(95), Y: y}, label)
		}
		if heat != nil {
			strip := dc
			strip.Min.X = dc.Max.X + vg.Points(24)
			strip.Max.X = strip.Min.X + vg.Points(50)
			colorBar(strip, dc, bar, "link\nutilization\n(%, mean)")
		}
	}
	var total int64
	for _, l := range p.Links {
		total += l.Speed
	}
	f.Note = note + fmt.Sprintf(" (%s of links)", units.BitRate(total))
	pg.note = f.Note
	return f, nil
}
