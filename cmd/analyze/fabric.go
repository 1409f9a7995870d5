package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/cmd/internal/cli"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/plots/report"
	"github.com/tracefabric/tracefabric/records"
)

// transportSentence says, in plain words, how the replay's senders behaved.
func transportSentence(transport string, speedup float64) string {
	switch transport {
	case records.ModeOpen:
		return fmt.Sprintf("Open loop: the replay injected every captured packet at its captured time (divided by the speedup, %s), whatever the fabric did: senders never slowed down for pauses, marks or drops, and dropped packets were not retransmitted.",
			units.FormatDecimal(speedup))
	case records.ModeClosed:
		return fmt.Sprintf("Closed loop: TCP and RoCEv2 flows were re-sent by simulated senders (DCTCP or NewReno, DCQCN), each captured packet available at its captured time (divided by the speedup, %s) and sent when the sender's congestion control allowed: senders slowed down on ECN marks and CNPs, waited for pauses and retransmitted what was dropped; other traffic stayed open loop.",
			units.FormatDecimal(speedup))
	case "":
		return "The run does not record how its senders behaved (no transport in run.json)."
	}
	return fmt.Sprintf("Transport: %s.", transport)
}

// runOptionRows are run.json's options and what did not enter the fabric as captured.
func runOptionRows(in *runInput) []report.KV {
	info := in.run.Info
	o := info.Options
	rows := []report.KV{{Key: "transport", Value: firstNonEmpty(info.Transport, "-")}}
	if o.Hosts != "" {
		prefix := ""
		if o.RackPrefix > 0 {
			prefix = fmt.Sprintf(" (/%d per rack)", o.RackPrefix)
		}
		speedup := units.FormatDecimal(o.Speedup)
		if o.TargetLoad > 0 {
			speedup += fmt.Sprintf(" (found by --target-load %s%%)", units.FormatDecimal(o.TargetLoad))
		}
		rows = append(rows,
			report.KV{Key: "speedup", Value: speedup},
			report.KV{Key: "host mapping", Value: o.Hosts + prefix},
			report.KV{Key: "oversize packets", Value: o.Oversize},
			report.KV{Key: "drain limit after the last packet", Value: units.FormatPs(float64(o.MaxDrainPs))},
			report.KV{Key: "load balancing", Value: o.LB})
	}
	rows = append(rows, captureRows(info)...)
	rows = append(rows, report.KV{Key: "trace packets", Value: units.FormatCount(info.TracePackets)},
		report.KV{Key: "trace families", Value: familyMix(info)})
	if len(info.NotInjected) == 0 {
		rows = append(rows, report.KV{Key: "not injected as captured", Value: "none: every packet of the trace entered the fabric as captured"})
	}
	for _, n := range info.NotInjected {
		key, val := "not injected: "+n.Reason, units.FormatCount(n.Packets)
		switch n.Kind {
		case records.NotInjectedSkipped:
			key = "not injected: " + n.Reason + " (skipped by the reader)"
		case records.NotInjectedIntraHost:
			key = "not injected: intra-host (both ends on one host)"
		case records.NotInjectedSplit:
			key, val = "not injected as captured: oversize, split", fmt.Sprintf("%s into %s packets", units.FormatCount(n.Packets), units.FormatCount(n.Into))
		case records.NotInjectedOversizeDrop:
			key = "not injected: oversize, dropped at the source host"
		}
		rows = append(rows, report.KV{Key: key, Value: val})
	}
	return rows
}

// captureRows say which part of the capture was replayed and how (--family,
// --filter, --start and --duration, --max-idle), how many copies (--replicate,
// --replicate-jitter), the load it offered (--target-load, run.json offered_load) and,
// closed loop, what became of its flows (run.json closed_loop); a row only for what
// the run used or recorded.
func captureRows(info analysis.RunInfo) []report.KV {
	o := info.Options
	var rows []report.KV
	if o.Family != "" && o.Family != "all" {
		rows = append(rows, report.KV{Key: "address family (--family)", Value: o.Family})
	}
	if o.Filter != "" {
		rows = append(rows, report.KV{Key: "filter (--filter)", Value: o.Filter})
	}
	if o.WindowStartNs != 0 || o.WindowAbsolute || o.WindowNs != 0 {
		rows = append(rows, report.KV{Key: "window (--start, --duration)", Value: windowWords(o)})
	}
	if o.MaxIdleNs > 0 {
		v := "every gap without a packet longer than " + units.HumanNanos(o.MaxIdleNs) + " shortened to it"
		if g := info.IdleGaps; g != nil {
			v += fmt.Sprintf(": %s shortened, %s of capture time removed", cli.Plural(g.Shortened, "gap"), units.HumanSeconds(g.RemovedS))
		}
		rows = append(rows, report.KV{Key: "idle gaps (--max-idle)", Value: v})
	}
	if r := info.Replication; r != nil {
		copies := "1 copy"
		if r.Copies != 1 {
			copies = units.FormatCount(int64(r.Copies)) + " copies"
		}
		v := fmt.Sprintf("%s of the capture's traffic, copy k on the racks rotated by the k-th of %s and on addresses whose leading bits rise by k x %d",
			copies, intList(r.RackShift), r.AddressStep)
		if len(r.PerTrace) > 1 {
			v += "; copies per trace " + intList(r.PerTrace)
		}
		v += fmt.Sprintf("; %s packets injected from them all", units.FormatCount(r.Packets))
		rows = append(rows, report.KV{Key: "copies (--replicate)", Value: v})
		if o.ReplicateJitterNs > 0 {
			offs := make([]string, len(r.OffsetsNs))
			for i, ns := range r.OffsetsNs {
				offs[i] = units.HumanNanos(ns)
			}
			rows = append(rows, report.KV{Key: "copy offsets (--replicate-jitter " + units.HumanNanos(o.ReplicateJitterNs) + ")", Value: strings.Join(offs, ", ")})
		}
	}
	if o.TargetLoad > 0 {
		rows = append(rows, report.KV{Key: "target load (--target-load)", Value: fmt.Sprintf(
			"%s%% of the busiest host link's speed at its p99 in 1 ms bins: speedup %s", units.FormatDecimal(o.TargetLoad), units.FormatDecimal(o.Speedup))})
	}
	if l := info.OfferedLoad; l != nil && l.BusiestLink != "" {
		rows = append(rows, report.KV{Key: "offered load (busiest host link)", Value: fmt.Sprintf(
			"%s %s: p99 %s of its speed in %s bins, peak %s (any host link), at speedup %s",
			l.BusiestLink, l.Direction, units.FormatFraction(l.P99Share), units.FormatPs(float64(l.BinPs)), units.FormatFraction(l.PeakShare), units.FormatDecimal(l.Speedup))})
	}
	if c := info.ClosedLoopFlows; c != nil {
		rows = append(rows, report.KV{Key: "closed-loop flows", Value: closedLoopFlowWords(c)})
	}
	return rows
}

// windowWords is the replayed window of the capture: "from 20 s after the first
// packet, for 1 s".
func windowWords(o records.RunOptions) string {
	from := "from the first packet"
	switch {
	case o.WindowAbsolute:
		from = "from " + time.Unix(0, o.WindowStartNs).UTC().Format(time.RFC3339Nano)
	case o.WindowStartNs != 0:
		from = "from " + units.HumanNanos(o.WindowStartNs) + " after the first packet"
	}
	if o.WindowNs > 0 {
		return from + ", for " + units.HumanNanos(o.WindowNs)
	}
	return from + " to the end"
}

// closedLoopFlowWords says what became of a closed-loop run's flows (run.json
// closed_loop): re-sent, left out, open loop by protocol, and the fallbacks by reason.
func closedLoopFlowWords(c *records.ClosedLoop) string {
	parts := []string{fmt.Sprintf("%s of %s flows re-sent closed loop", units.FormatCount(c.Closed), units.FormatCount(c.Flows))}
	if c.ControlOnly > 0 {
		parts = append(parts, fmt.Sprintf("%s control only (left out: the simulated receivers send their own)", units.FormatCount(c.ControlOnly)))
	}
	if c.Open > 0 {
		parts = append(parts, fmt.Sprintf("%s open loop (no closed-loop sender for their protocol)", units.FormatCount(c.Open)))
	}
	if n, why := analysis.Fallbacks(c); n > 0 {
		parts = append(parts, fmt.Sprintf("%s fell back to open loop (%s: closed loop cannot re-send them)", units.FormatCount(n), why))
	} else {
		parts = append(parts, "none fell back to open loop")
	}
	return strings.Join(parts, "; ")
}

// hostMappingBlocks show where the endpoints went (run.json host_mapping): a table of
// the racks with endpoints of the run's flows, the racks without in its note, and the
// mapping's warning (analysis.Caveats); nothing for a run.json without host_mapping.
func hostMappingBlocks(info analysis.RunInfo) []report.Block {
	m := info.HostMapping
	if m == nil {
		return nil
	}
	placed := 0
	for _, r := range m.Racks {
		placed += r.Endpoints
	}
	endpoints := units.FormatCount(int64(m.Endpoints)) + " endpoints"
	if placed != m.Endpoints { // copies of --replicate have addresses of their own
		endpoints += fmt.Sprintf(" (%s with the copies)", units.FormatCount(int64(placed)))
	}
	t := report.Table{Caption: fmt.Sprintf("Endpoints per rack (--hosts %s: %s on %s of %s racks, %s hosts)", m.Mode,
		endpoints, units.FormatCount(int64(m.RacksUsed)), units.FormatCount(int64(len(m.Racks))), units.FormatCount(int64(m.HostsUsed))),
		Columns: []string{"rack", "hosts", "endpoints", "hosts used"}}
	var empty []string
	for _, r := range m.Racks {
		if r.Endpoints == 0 {
			empty = append(empty, r.Name)
			continue
		}
		t.Rows = append(t.Rows, []string{r.Name, units.FormatCount(int64(r.Hosts)), units.FormatCount(int64(r.Endpoints)), units.FormatCount(int64(r.HostsUsed))})
	}
	var notes []string
	if g := m.Subnet; g != nil {
		notes = append(notes, fmt.Sprintf("subnet groups (/%d IPv4, /%d IPv6): %s, %s moved whole to another rack than their own, %s split over several racks",
			info.Options.RackPrefix, info.Options.RackPrefix6, units.FormatCount(int64(g.Groups)), units.FormatCount(int64(g.Moved)), units.FormatCount(int64(g.Split))))
	}
	switch {
	case len(empty) == 0:
	case len(empty) <= 8:
		notes = append(notes, "racks without an endpoint: "+strings.Join(empty, ", "))
	default:
		notes = append(notes, fmt.Sprintf("%s racks without an endpoint (%s, ...)", units.FormatCount(int64(len(empty))), strings.Join(empty[:8], ", ")))
	}
	notes = append(notes, "endpoints are the distinct addresses of the run's flows, copies of --replicate included (docs/model.md#host-mapping)")
	t.Note = strings.Join(notes, "; ")
	blocks := []report.Block{report.TableBlock(t)}
	if m.Warning != "" {
		blocks = append(blocks, report.ParagraphBlock("Host mapping warning: "+m.Warning+"."))
	}
	return blocks
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// fabricSection describes the simulated fabric from run.json's configuration and
// topology: for the Clos, per tier the switches, their ports and speeds,
// oversubscription (downlink to uplink bandwidth), headroom per port and pool sizes;
// for a topology file, per role; then the buffer, and the fabric heat map (link
// utilization and drops as colour).
func fabricSection(in *runInput, figs *figures) report.Section {
	sec := fabricTables(in)
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameFabricHeat))
	return sec
}

func fabricTables(in *runInput) report.Section {
	sec := report.Section{Title: "Fabric", ID: "fabric"}
	cfg := in.cfg
	if in.run.Info.Topology.File != "" {
		if f, err := recordedFabric(in); err == nil && f != nil {
			topo := in.run.Info.Topology
			sec.Blocks = append(sec.Blocks, report.TableBlock(roleTable(in, f)), report.KeyValueBlock("",
				report.KV{Key: "topology file", Value: topo.File + " (" + topo.Shape + ")"},
				report.KV{Key: "hosts, switches, links", Value: fmt.Sprintf("%s, %s, %s", units.FormatCount(int64(topo.Hosts)), units.FormatCount(int64(len(topo.Switches))), units.FormatCount(int64(topo.Links)))},
				report.KV{Key: "fabric BDP, base RTT", Value: fmt.Sprintf("%s, %s", units.FormatBytes(float64(topo.BDPBytes)), units.FormatPs(float64(topo.BaseRTTPs)))},
				report.KV{Key: "ECMP hash, load balancing", Value: cfg.Switch.EcmpHashMethod.String() + ", " + cfg.Switch.LoadBalancingMethod.String()},
			))
			return sec
		}
	}
	count := map[records.Tier]int{}
	for _, sw := range in.run.Info.Topology.Switches {
		count[sw.Tier]++
	}
	t := report.Table{Caption: "Tiers", Columns: []string{"tier", "switches", "ports down", "ports up", "oversubscription (down:up)", "headroom per port (lossless pool)", "pools"}}
	for _, tier := range cfg.Tiers() {
		ports := cfg.Ports(tier)
		down := downPorts(cfg, tier)
		layout, err := cfg.Switch.Layout(ports)
		headroom, pools := "-", "-"
		if err == nil {
			headroom = distinctSizes(layout.Headroom[:down], layout.Headroom[down:], cfg.Switch.CellSize)
			var ps []string
			for i, p := range cfg.Switch.Pools {
				ps = append(ps, fmt.Sprintf("%s %s", p.Name, units.FormatBytes(float64(layout.PoolSizes[i]))))
			}
			pools = strings.Join(ps, ", ")
		}
		rt, err := records.ParseTier(tier.String())
		n := "-"
		if err == nil {
			n = units.FormatCount(int64(count[rt]))
		}
		t.Rows = append(t.Rows, []string{tier.String(), n, portGroup(ports[:down]), portGroup(ports[down:]), oversubscription(ports[:down], ports[down:]), headroom, pools})
	}
	sec.Blocks = append(sec.Blocks, report.TableBlock(t), report.TableBlock(classesTable(&cfg.Switch)))
	var poolRows []string
	for _, p := range cfg.Switch.Pools {
		kind := "lossy"
		if cfg.Switch.Lossless(slicesIndex(cfg.Switch.Pools, p.Name)) {
			kind = "lossless"
		}
		poolRows = append(poolRows, fmt.Sprintf("%s (%s, %s of the buffer left after headroom, TCs %s)", p.Name, kind, p.Size, intList(p.TrafficClasses)))
	}
	topo := in.run.Info.Topology
	sec.Blocks = append(sec.Blocks, report.KeyValueBlock("",
		report.KV{Key: "hosts", Value: units.FormatCount(int64(topo.Hosts))},
		report.KV{Key: "switch buffer", Value: fmt.Sprintf("%s (%s cells of %s)", cfg.Switch.BufferSize, units.FormatCount(int64(cfg.Switch.BufferSize/cfg.Switch.CellSize)), cfg.Switch.CellSize)},
		report.KV{Key: "pools", Value: strings.Join(poolRows, "; ")},
		report.KV{Key: "lossless classes (PFC)", Value: intList(cfg.Switch.PfcEnabled)},
		report.KV{Key: "headroom setting", Value: cfg.Switch.Headroom.String()},
		report.KV{Key: "ECMP hash, load balancing", Value: cfg.Switch.EcmpHashMethod.String() + ", " + cfg.Switch.LoadBalancingMethod.String()},
		report.KV{Key: "fabric BDP, base RTT", Value: fmt.Sprintf("%s, %s", units.FormatBytes(float64(topo.BDPBytes)), units.FormatPs(float64(topo.BaseRTTPs)))},
	))
	return sec
}

// downPorts is the number of down-links of a switch of tier (config.Ports lists them
// first).
func downPorts(cfg *config.Config, tier config.Tier) int {
	t := cfg.Topology
	switch tier {
	case config.TierRack:
		return t.HostsPerRack
	case config.TierFabric:
		return t.RacksPerPod
	case config.TierSpine:
		return t.Pods
	}
	return 0
}

// portGroup is "16 x 100Gbps" for ports of one speed ("-" for none).
func portGroup(ports []config.PortSpec) string {
	if len(ports) == 0 {
		return "-"
	}
	byRate := map[units.BitRate]int{}
	var order []units.BitRate
	for _, p := range ports {
		if byRate[p.Speed] == 0 {
			order = append(order, p.Speed)
		}
		byRate[p.Speed]++
	}
	var parts []string
	for _, r := range order {
		parts = append(parts, fmt.Sprintf("%d x %s", byRate[r], r))
	}
	return strings.Join(parts, ", ")
}

// oversubscription is the downlink bandwidth over the uplink bandwidth, "4:1" ("-"
// without uplinks).
func oversubscription(down, up []config.PortSpec) string {
	var d, u float64
	for _, p := range down {
		d += float64(p.Speed)
	}
	for _, p := range up {
		u += float64(p.Speed)
	}
	if u == 0 {
		return "- (no uplinks)"
	}
	return units.FormatDecimal(d/u) + ":1"
}

// distinctSizes formats the headroom of the down and up ports: one size when they
// agree ("236,032 B (922 cells)"), else both.
func distinctSizes(down, up []units.Bytes, cell units.Bytes) string {
	var all []units.Bytes
	all = append(append(all, down...), up...)
	if len(all) == 0 {
		return "-"
	}
	size := func(b units.Bytes) string {
		return fmt.Sprintf("%s B (%s cells)", units.FormatCount(int64(b)), units.FormatCount(int64(b/max(cell, 1))))
	}
	same := true
	for _, h := range all {
		same = same && h == all[0]
	}
	switch {
	case same:
		return size(all[0])
	case len(down) == 0:
		return size(up[0]) + " up"
	case len(up) == 0:
		return size(down[0]) + " down"
	}
	return size(down[0]) + " down, " + size(up[0]) + " up"
}

// classesTable lists the traffic classes (docs/model.md#classification): the DSCP
// code points the configuration's DSCP-to-TC map gives each, and the class's pool,
// PFC and ECN.
func classesTable(s *config.Switch) report.Table {
	caption := "Traffic classes (DSCP / 8)"
	if len(s.DscpToTc) > 0 {
		caption = "Traffic classes (Switch.DscpToTc, DSCP / 8 for the code points it does not list)"
	}
	t := report.Table{Caption: caption, Columns: []string{"tc", "DSCP", "pool", "PFC (lossless)", "ECN marking"}}
	m := s.ClassMap()
	yesNo := map[bool]string{true: "yes", false: "no"}
	for tc := 0; tc < config.NumTC; tc++ {
		var dscps []int
		for d, c := range m {
			if int(c) == tc {
				dscps = append(dscps, d)
			}
		}
		pool := "-"
		if i := s.PoolOf(tc); i >= 0 {
			pool = s.Pools[i].Name
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(tc), intRanges(dscps), pool, yesNo[s.PfcOn(tc)], yesNo[s.Ecn(tc).Enabled]})
	}
	return t
}

// intRanges prints ascending integers as ranges: "0-7, 24", "none" for none.
func intRanges(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(xs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func intList(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

func slicesIndex(pools []config.Pool, name string) int {
	for i, p := range pools {
		if p.Name == name {
			return i
		}
	}
	return -1
}
