package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/fabric"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/plots/report"
	"github.com/tracefabric/tracefabric/records"
)

// recordedFabric rebuilds the run's fabric from run.json's topology (switch roles
// and levels, link list) and the records' node names; nil without a link list
// (a run.json written before topology files).
func recordedFabric(in *runInput) (*fabric.Fabric, error) {
	topo := in.run.Info.Topology
	if len(topo.LinkList) == 0 {
		return nil, nil
	}
	var sws []fabric.SwitchInfo
	for _, s := range topo.Switches {
		sws = append(sws, fabric.SwitchInfo{ID: s.ID, Role: s.Role, Level: s.Level})
	}
	var links []fabric.LinkInfo
	for _, l := range topo.LinkList {
		links = append(links, fabric.LinkInfo{A: l.A, APort: l.APort, B: l.B, BPort: l.BPort, Speed: l.SpeedBps, Delay: l.DelayPs})
	}
	names := make([]string, len(in.run.Nodes))
	for i := range names {
		names[i] = in.run.Nodes.Name(analysis.NodeID(i))
	}
	return fabric.Rebuild(firstNonEmpty(topo.Shape, fabric.ShapeClos), names, topo.Hosts, sws, links)
}

// linkHeat is the heat map's colour (docs/analysis.md#run-and-fabric): per link, the
// mean utilization of its busier direction over the run (the data frames ports.arrow
// says the port sent, tx_bytes plus 20 bytes of preamble and inter-frame gap per
// tx_packets, all classes, x 8 over speed x simulated time) and the packets dropped
// at its two ports (drops_total).
func linkHeat(in *runInput, f *fabric.Fabric) (*plots.LinkHeat, error) {
	r, err := records.OpenPorts(filepath.Join(in.dir, records.PortsFile))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	type key struct{ node, port int32 }
	tx := map[key]int64{}
	drops := map[key]int64{}
	var row records.PortRow
	for r.Next(&row) {
		k := key{row.Node, row.Port}
		tx[k] += row.TxBytes + wireOverhead*row.TxPackets
		drops[k] += row.DropsTotal()
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	sim := float64(in.run.Info.SimPs) / 1e12
	h := &plots.LinkHeat{Utilization: make([]float64, len(f.Links)), Drops: make([]int64, len(f.Links))}
	for id, l := range f.Links {
		a, b := key{l.A.Node, l.A.Port}, key{l.B.Node, l.B.Port}
		if sim > 0 && l.Speed > 0 {
			h.Utilization[id] = float64(max(tx[a], tx[b])) * 8 / (float64(l.Speed) * sim)
		}
		h.Drops[id] = drops[a] + drops[b]
	}
	return h, nil
}

// wireOverhead is what a frame takes on the wire beyond its bytes: preamble, start of
// frame delimiter and inter-frame gap (docs/model.md#frame-sizes).
const wireOverhead = 20

// fabricHeatFigure draws the run's fabric coloured by link utilization and drops.
func fabricHeatFigure(in *runInput) (*plots.Figure, error) {
	f, err := recordedFabric(in)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, &plots.NoDataError{Figure: plots.NameFabricHeat, Reason: "run.json has no link list (written by a replay before topology files)"}
	}
	heat, err := linkHeat(in, f)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &plots.NoDataError{Figure: plots.NameFabricHeat, Reason: "the run has no ports.arrow"}
	}
	if err != nil {
		return nil, err
	}
	return plots.FabricMap(f.Picture(), heat, plots.Options{})
}

// roleTable is the Fabric section's table of a topology file's run: per role, its
// records tier, switches, ports, oversubscription (down:up bandwidth) and profiles,
// from run.json's topology.
func roleTable(in *runInput, f *fabric.Fabric) report.Table {
	t := report.Table{Caption: "Roles (from the topology file: docs/topology.md)", Columns: []string{"role", "records tier", "level", "switches", "ports", "oversubscription (down:up)", "profiles"}}
	type agg struct {
		tier         string
		level, count int
		pmin, pmax   int
		omin, omax   float64
		profiles     []string
	}
	by := map[string]*agg{}
	var order []string
	for _, s := range in.run.Info.Topology.Switches {
		a, ok := by[s.Role]
		if !ok {
			a = &agg{tier: s.Tier.String(), level: s.Level, pmin: 1 << 30, omin: -1}
			by[s.Role] = a
			order = append(order, s.Role)
		}
		a.count++
		n := &f.Nodes[s.ID]
		a.pmin, a.pmax = min(a.pmin, len(n.Ports)), max(a.pmax, len(n.Ports))
		o := f.Oversubscription(s.ID)
		if a.omin < 0 || o < a.omin {
			a.omin = o
		}
		a.omax = max(a.omax, o)
		p := firstNonEmpty(s.Profile, "Switch")
		if !slices.Contains(a.profiles, p) {
			a.profiles = append(a.profiles, p)
		}
	}
	slices.SortStableFunc(order, func(x, y string) int { return by[x].level - by[y].level })
	for _, r := range order {
		a := by[r]
		ports := fmt.Sprint(a.pmin)
		if a.pmax != a.pmin {
			ports = fmt.Sprintf("%d..%d", a.pmin, a.pmax)
		}
		over := "- (no uplinks)"
		if a.omax > 0 {
			over = units.FormatDecimal(a.omin) + ":1"
			if a.omax != a.omin {
				over += " .. " + units.FormatDecimal(a.omax) + ":1"
			}
		}
		t.Rows = append(t.Rows, []string{r, a.tier, fmt.Sprint(a.level), units.FormatCount(int64(a.count)), ports, over, strings.Join(a.profiles, ", ")})
	}
	return t
}
