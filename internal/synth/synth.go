package synth

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/tracefabric/tracefabric/fabric"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
)

// Size is what to generate.
type Size struct {
	Flows     int   // rows of flows.arrow (every flow crosses pods: rack, fabric, spine sets)
	PFCEvents int   // rows of pfc.arrow, rounded down to whole chains of 20 events
	Drops     int   // rows of drops.arrow (TC0 flows, egress-limit at the destination rack)
	SimPs     int64 // simulated time; 0: 1 ms per pause chain, at least 100 ms
}

const (
	hopsPerChain   = 5    // rack <- fabric <- spine <- fabric <- rack <- host
	eventsPerPause = 4    // tx_pause, rx_pause, tx_resume, rx_resume
	bufferSamples  = 1000 // buffer.arrow samples per (switch, pool)
)

// Write writes a complete run into dir (which must not exist, or hold a run) and
// returns its run.json.
func Write(dir string, sz Size, seed uint64) (*records.Run, error) {
	if sz.SimPs <= 0 {
		// Pause chains about 1 ms apart: storms as dense at any size.
		sz.SimPs = max(100_000_000_000, int64(sz.PFCEvents/(hopsPerChain*eventsPerPause))*1_000_000_000)
	}
	cfg := config.Default()
	clos, err := newClosView(cfg.Topology)
	if err != nil {
		return nil, err
	}
	g := &gen{clos: clos, sz: sz, r: rand.New(rand.NewPCG(seed, 0x5157)), grid: clos.Topology}
	for _, n := range clos.Nodes {
		g.names = append(g.names, n.Name)
	}
	out, err := records.CreateOutputDir(dir)
	if err != nil {
		return nil, err
	}
	run, err := g.write(out, &cfg)
	if err != nil {
		out.Abort()
		return nil, err
	}
	if err := out.Commit(run); err != nil {
		return nil, err
	}
	return run, nil
}

type gen struct {
	clos  *closView
	grid  config.Topology
	sz    Size
	r     *rand.Rand
	names []string

	// per flow, what drops and loadbalance need
	flows []flowInfo
	// loadbalance counters per (switch node, member)
	lbFlows, lbBytes map[[2]int]int64
	dropsByFlow      map[int]int64
	pfcFrames        int64
	rows             map[string]int64
}

type flowInfo struct {
	src, dst       int // host ids
	tc             uint8
	first, last    int64
	packets, bytes int64
	rackM, fabricM int
}

func (g *gen) dicts() records.Dictionaries { return records.Dictionaries{Nodes: g.names} }

// portTo is node a's port whose link leads to node b.
func (g *gen) portTo(a, b int) int32 {
	for i, p := range g.clos.Nodes[a].Ports {
		if p.Peer == b {
			return int32(i)
		}
	}
	panic(fmt.Sprintf("synth: %s has no port to %s", g.names[a], g.names[b]))
}

func (g *gen) rackOf(host int) int { return g.clos.Nodes[host].Ports[0].Peer }

// uplinkPeer is the node behind member m of node's uplink set.
func (g *gen) uplinkPeer(node, m int) int {
	return g.clos.Nodes[node].Ports[g.clos.UplinkSet(node)[m]].Peer
}

func (g *gen) write(out *records.OutputDir, cfg *config.Config) (*records.Run, error) {
	g.rows = map[string]int64{}
	g.lbFlows, g.lbBytes, g.dropsByFlow = map[[2]int]int64{}, map[[2]int]int64{}, map[int]int64{}
	g.planFlows()
	sim := records.Simulation{Dropped: map[records.DropReason]int64{}, Undrained: map[string]int64{}}
	for r := range records.NumDropReasons {
		sim.Dropped[records.DropReason(r)] = 0
	}
	steps := []func(*records.OutputDir, *records.Simulation) error{
		g.writeDrops, g.writeFlows, g.writePFC, g.writePorts, g.writeLoadBalance, g.writeBuffer, g.writeDelay,
	}
	for _, step := range steps {
		if err := step(out, &sim); err != nil {
			return nil, err
		}
	}
	sim.SimTimePs = g.sz.SimPs
	sim.PFCFrames = g.pfcFrames
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	trace, _ := json.Marshal(map[string]int64{"packets": sim.Injected, "flows": int64(len(g.flows))})
	hm, err := replay.RecordHashMethod(cfg.Switch.EcmpHashMethod)
	if err != nil {
		return nil, err
	}
	return &records.Run{Version: "synth", Command: []string{"generate"}, Seed: 1, HashMethod: hm, Config: cfgJSON,
		Topology: records.Topology{Nodes: len(g.names), Links: g.clos.Links(), Hosts: g.clos.Hosts},
		Trace:    trace, Simulation: sim, Records: g.rows}, nil
}

// planFlows draws every flow: a source host in one pod, a destination in the other,
// members at the source rack and fabric switch, timing and size.
func (g *gen) planFlows() {
	perPod := g.grid.RacksPerPod * g.grid.HostsPerRack
	g.flows = make([]flowInfo, g.sz.Flows)
	for i := range g.flows {
		pod := g.r.IntN(2)
		f := flowInfo{src: pod*perPod + g.r.IntN(perPod), dst: (1-pod)*perPod + g.r.IntN(perPod),
			rackM: g.r.IntN(4), fabricM: g.r.IntN(4), packets: 1 + g.r.Int64N(64)}
		if g.r.IntN(2) == 0 {
			f.tc = 3
		}
		f.bytes = f.packets * 1500
		f.first = g.r.Int64N(g.sz.SimPs * 9 / 10)
		f.last = f.first + f.packets*1_000_000
		g.flows[i] = f
	}
}

func (g *gen) writeDrops(out *records.OutputDir, sim *records.Simulation) error {
	w, err := records.NewDropsWriter(out.Path(records.DropsFile), g.dicts())
	if err != nil {
		return err
	}
	type drop struct {
		t    int64
		flow int
	}
	drops := make([]drop, 0, g.sz.Drops)
	for len(drops) < g.sz.Drops && len(g.flows) > 0 {
		i := g.r.IntN(len(g.flows))
		f := &g.flows[i]
		if f.tc != 0 || g.dropsByFlow[i] >= f.packets {
			continue
		}
		g.dropsByFlow[i]++
		drops = append(drops, drop{f.first + g.r.Int64N(f.last-f.first+1), i})
	}
	slices.SortStableFunc(drops, func(a, b drop) int { return int(min(max(a.t-b.t, -1), 1)) })
	for _, d := range drops {
		f := &g.flows[d.flow]
		rack := g.rackOf(f.dst)
		row := records.DropRow{TimePs: d.t, Node: int32(rack), Tier: records.TierRack, Port: g.portTo(rack, f.dst), TC: f.tc,
			Reason: records.ReasonEgressLimit, FlowID: int64(d.flow), Src: addr(g.grid, f.src), Dst: addr(g.grid, f.dst),
			Proto: 6, Sport: 40000, Dport: 5201, Bytes: 1500, TraceIndex: int64(d.flow)}
		if err := w.Append(&row); err != nil {
			return err
		}
	}
	sim.Dropped[records.ReasonEgressLimit] = int64(len(drops))
	return g.close(w.Close(), records.DropsFile, w.Rows())
}

func (g *gen) close(err error, file string, rows int64) error {
	if err != nil {
		return err
	}
	g.rows[file] = rows
	return nil
}

// addr is the address of a host: 10.pod.rack.(h+1).
func addr(grid config.Topology, host int) ipaddr.Addr {
	h := host % grid.HostsPerRack
	rack := host / grid.HostsPerRack
	return ipaddr.From4([4]byte{10, byte(rack / grid.RacksPerPod), byte(rack % grid.RacksPerPod), byte(h + 1)})
}

func (g *gen) writeFlows(out *records.OutputDir, sim *records.Simulation) error {
	w, err := records.NewFlowsWriter(out.Path(records.FlowsFile), g.dicts())
	if err != nil {
		return err
	}
	for i := range g.flows {
		f := &g.flows[i]
		dropped := g.dropsByFlow[i]
		row := records.FlowRow{FlowID: int64(i), Src: addr(g.grid, f.src), Dst: addr(g.grid, f.dst), Proto: 17,
			Sport: uint16(49152 + i%16384), Dport: 4791, DSCP: f.tc << 3, TC: f.tc, SrcHost: int32(f.src), DstHost: int32(f.dst),
			Packets: f.packets, Bytes: f.bytes, Delivered: f.packets - dropped, Dropped: dropped,
			FirstPs: f.first, LastPs: f.last, RackMember: int32(f.rackM), FabricMember: int32(f.fabricM)}
		if f.tc == 0 {
			row.Proto, row.Sport, row.Dport = 6, 40000, 5201
		}
		if row.Delivered > 0 {
			row.DelayMinPs = 5_000_000 + g.r.Int64N(1_000_000)
			row.DelayMeanPs = row.DelayMinPs + g.r.Int64N(50_000_000)
			row.DelayMaxPs = row.DelayMeanPs + g.r.Int64N(50_000_000)
			if g.r.IntN(10) == 0 {
				row.CEMarked = 1
			}
		}
		if err := w.Append(&row); err != nil {
			return err
		}
		sim.Injected += f.packets
		sim.Delivered += row.Delivered
		sim.CEMarked += row.CEMarked
		rack := g.rackOf(f.src)
		fabric := g.uplinkPeer(rack, f.rackM)
		g.lbFlows[[2]int{rack, f.rackM}]++
		g.lbBytes[[2]int{rack, f.rackM}] += f.bytes
		g.lbFlows[[2]int{fabric, f.fabricM}]++
		g.lbBytes[[2]int{fabric, f.fabricM}] += f.bytes
	}
	return g.close(w.Close(), records.FlowsFile, w.Rows())
}

// writePFC writes pause chains: a congested rack pauses a fabric switch, which
// pauses a spine, which pauses the other pod's fabric switch, which pauses a rack,
// which pauses a host; nested in time (each upstream pause starts 2 us later and
// ends 2 us earlier).
func (g *gen) writePFC(out *records.OutputDir, _ *records.Simulation) error {
	w, err := records.NewPFCWriter(out.Path(records.PFCFile), g.dicts())
	if err != nil {
		return err
	}
	chains := g.sz.PFCEvents / (hopsPerChain * eventsPerPause)
	t := g.clos.Topology
	events := make([]records.PFCRow, 0, chains*hopsPerChain*eventsPerPause)
	for range chains {
		pod := g.r.IntN(t.Pods)
		rack := g.clos.RackNode(pod*t.RacksPerPod + g.r.IntN(t.RacksPerPod))
		m := g.r.IntN(t.FabricPerPod)
		fabric := g.uplinkPeer(rack, m)
		spine := g.uplinkPeer(fabric, g.r.IntN(t.SpinesPerPlane))
		var fabric2 int
		for _, p := range g.clos.Nodes[spine].Ports {
			if g.clos.Nodes[p.Peer].Pod != pod {
				fabric2 = p.Peer
			}
		}
		rack2 := g.clos.Nodes[fabric2].Ports[g.r.IntN(t.RacksPerPod)].Peer
		host := g.clos.Nodes[rack2].Ports[g.r.IntN(t.HostsPerRack)].Peer
		path := []int{rack, fabric, spine, fabric2, rack2, host} // path[k] pauses path[k+1]
		start := g.r.Int64N(g.sz.SimPs * 9 / 10)
		dur := 20_000_000 + g.r.Int64N(2_000_000_000) // 20 us .. 2 ms
		for k := range hopsPerChain {
			x, y := path[k], path[k+1]
			s, e := start+int64(k)*2_000_000, start+dur-int64(k)*2_000_000
			if e <= s {
				e = s + 1_000_000
			}
			px, py := g.portTo(x, y), g.portTo(y, x)
			events = append(events,
				records.PFCRow{TimePs: s, Node: int32(x), Port: px, Peer: int32(y), TC: 3, Event: records.EventTxPause, Quanta: 65535},
				records.PFCRow{TimePs: s, Node: int32(y), Port: py, Peer: int32(x), TC: 3, Event: records.EventRxPause, Quanta: 65535},
				records.PFCRow{TimePs: e, Node: int32(x), Port: px, Peer: int32(y), TC: 3, Event: records.EventTxResume},
				records.PFCRow{TimePs: e, Node: int32(y), Port: py, Peer: int32(x), TC: 3, Event: records.EventRxResume},
			)
			g.pfcFrames += 2
		}
	}
	slices.SortStableFunc(events, func(a, b records.PFCRow) int { return int(min(max(a.TimePs-b.TimePs, -1), 1)) })
	for i := range events {
		if err := w.Append(&events[i]); err != nil {
			return err
		}
	}
	return g.close(w.Close(), records.PFCFile, w.Rows())
}

func (g *gen) writePorts(out *records.OutputDir, _ *records.Simulation) error {
	w, err := records.NewPortsWriter(out.Path(records.PortsFile), g.dicts())
	if err != nil {
		return err
	}
	for n, node := range g.clos.Nodes {
		for p, port := range node.Ports {
			for tc := range uint8(8) {
				row := records.PortRow{Node: int32(n), Tier: replay.RecordTier(node.Tier), Port: int32(p), Peer: int32(port.Peer), TC: tc}
				if tc == 0 || tc == 3 {
					row.TxPackets = 1000 + g.r.Int64N(100000)
					row.RxPackets = row.TxPackets
					if node.Tier != config.TierHost && g.r.IntN(4) == 0 {
						row.ECNMarked = g.r.Int64N(row.TxPackets / 10)
					}
				}
				if err := w.Append(&row); err != nil {
					return err
				}
			}
		}
	}
	return g.close(w.Close(), records.PortsFile, w.Rows())
}

func (g *gen) writeLoadBalance(out *records.OutputDir, _ *records.Simulation) error {
	w, err := records.NewLoadBalanceWriter(out.Path(records.LoadBalanceFile), g.dicts())
	if err != nil {
		return err
	}
	hm := records.HashCRC32WithSalt
	for n, node := range g.clos.Nodes {
		for m, p := range g.clos.UplinkSet(n) {
			k := [2]int{n, m}
			row := records.LoadBalanceRow{Node: int32(n), Tier: replay.RecordTier(node.Tier), Set: 0, Member: int32(m), Port: int32(p),
				Peer: int32(node.Ports[p].Peer), Flows: g.lbFlows[k], Flowlets: g.lbFlows[k], Packets: g.lbBytes[k] / 1500,
				Bytes: g.lbBytes[k], HashMethod: hm}
			if err := w.Append(&row); err != nil {
				return err
			}
		}
	}
	return g.close(w.Close(), records.LoadBalanceFile, w.Rows())
}

func (g *gen) writeBuffer(out *records.OutputDir, _ *records.Simulation) error {
	w, err := records.NewBufferWriter(out.Path(records.BufferFile), g.dicts())
	if err != nil {
		return err
	}
	switches := g.clos.f.Switches()
	period := max(g.sz.SimPs/bufferSamples, 1)
	for t := period; t <= g.sz.SimPs; t += period {
		for _, n := range switches {
			for pool := range uint8(2) {
				shared := g.r.Int64N(1 << 20)
				row := records.BufferRow{TimePs: t, Node: int32(n), Pool: pool, SharedBytes: shared, IngressBytes: shared, EgressBytes: shared}
				if err := w.Append(&row); err != nil {
					return err
				}
			}
		}
	}
	return g.close(w.Close(), records.BufferFile, w.Rows())
}

func (g *gen) writeDelay(out *records.OutputDir, sim *records.Simulation) error {
	w, err := records.NewDelayWriter(out.Path(records.DelayFile), g.dicts())
	if err != nil {
		return err
	}
	// Split the delivered packets over log buckets [2^k, 2^(k+1)) ns, k = 12..17.
	for _, tc := range []uint8{0, 3} {
		left := sim.Delivered / 2
		for k := 12; k <= 17; k++ {
			n := left / 2
			if k == 17 {
				n = left
			}
			left -= n
			row := records.DelayRow{TC: tc, LoPs: int64(1) << k * 1000, HiPs: int64(1) << (k + 1) * 1000, Packets: n}
			if err := w.Append(&row); err != nil {
				return err
			}
		}
	}
	return g.close(w.Close(), records.DelayFile, w.Rows())
}

// closView is the default Clos as the generator walks it (node index, tier, pod,
// ports to peers; the uplink set of a rack or fabric switch).
type closView struct {
	config.Topology
	Hosts int
	Nodes []closNode
	f     *fabric.Fabric
}

type closNode struct {
	Name  string
	Tier  config.Tier
	Pod   int
	Ports []closPort
}

type closPort struct{ Peer int }

func newClosView(t config.Topology) (*closView, error) {
	f, err := fabric.FromConfig(t)
	if err != nil {
		return nil, err
	}
	c := &closView{Topology: t, Hosts: f.Hosts, f: f}
	for _, n := range f.Nodes {
		cn := closNode{Name: n.Name, Tier: n.Tier, Pod: n.Pod}
		for _, p := range n.Ports {
			cn.Ports = append(cn.Ports, closPort{Peer: int(p.Peer)})
		}
		c.Nodes = append(c.Nodes, cn)
	}
	return c, nil
}

// RackNode is the node of global rack r.
func (c *closView) RackNode(r int) int { return int(c.f.Racks[r].Node) }

// Links is the number of links.
func (c *closView) Links() int { return len(c.f.Links) }

// UplinkSet lists a node's ports to switches of a higher level.
func (c *closView) UplinkSet(node int) []int {
	if node < c.Hosts {
		return nil
	}
	var up []int
	for p := range c.f.Nodes[node].Ports {
		if c.f.Up(int32(node), p) {
			up = append(up, p)
		}
	}
	return up
}
