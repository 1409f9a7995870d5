package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
	"github.com/tracefabric/tracefabric/internal/units"
)

// Run replays the prepared trace with the configured hash method (or method, when
// not "") and writes the records and run.json into outDir, atomically. It returns
// the run.json it wrote.
func (pr *Prepared) Run(outDir, method string) (*records.Run, error) {
	cfg, err := methodConfig(pr.Opt.Config, method)
	if err != nil {
		return nil, err
	}
	out, err := records.CreateOutputDir(outDir)
	if err != nil {
		return nil, fmt.Errorf("%w: output directory: %w", ErrInput, err)
	}
	s, err := newSim(pr, cfg, out)
	if err == nil {
		err = s.run()
	}
	if cerr := s.close(); err == nil {
		err = cerr
	}
	if err != nil {
		out.Abort()
		return nil, err
	}
	run, err := s.runJSON()
	if err != nil {
		out.Abort()
		return nil, err
	}
	if err := out.Commit(run); err != nil {
		return nil, err
	}
	return run, nil
}

// flowState is what the replay keeps per 5-tuple flow: 128 bytes, two cache lines, the
// first with what injection updates, the second with what deliveries update.
type flowState struct {
	// Injection (and drops).
	src, dst       int32
	packets, bytes int64
	first, last    units.Time
	dropped        int64
	tuple          ingest.FiveTuple
	dscp           uint8
	// Deliveries.
	delivered, ce            int64
	delayMin, delayMax       int64
	delaySum                 int64
	pathChanges              int64
	rackMember, fabricMember int16
	lastRack, lastFabric     int16
	seen                     bool
}

// sim is one simulation run: the network, the injector and the record writers.
type sim struct {
	pr   *Prepared
	cfg  *config.Config
	eng  *switchmodel.Engine
	net  *switchmodel.Network
	hid  switchmodel.HandlerID
	tier []records.Tier // per node

	// injector
	feed          *feed
	next          *arrival // the packet to inject next; nil after the last
	readErr       error
	lastInj       units.Time
	doneInjecting bool
	mtu           int32
	trace         traceCounts
	injected      int64 // packets handed to NICs (pieces included)

	flows      []flowState
	delay      records.DelayHistogram
	oversizeAt [][switchmodel.NumTC]int64 // oversize drops per source host and TC

	w       *records.WriterSet
	drops   *records.DropsWriter
	pfc     *records.PFCWriter
	buffer  *records.BufferWriter
	packets *records.PacketsWriter // nil without --record-packets
	obsErr  error

	dropRow records.DropRow
	pfcRow  records.PFCRow
	bufRow  records.BufferRow
	pktRow  records.PacketRow
	hops    []switchmodel.Hop

	wallStart time.Time
	wall      time.Duration
	rows      map[string]int64
}

func newSim(pr *Prepared, cfg *config.Config, out *records.OutputDir) (*sim, error) {
	s := &sim{pr: pr, cfg: cfg, mtu: int32(cfg.Switch.Mtu), rows: map[string]int64{}}
	names := make([]string, len(pr.Clos.Nodes))
	for i, n := range pr.Clos.Nodes {
		names[i] = n.Name
		s.tier = append(s.tier, n.Tier)
	}
	w, err := records.NewWriterSet(out.Dir(), records.Dictionaries{Nodes: names}, pr.Opt.RecordPackets)
	if err != nil {
		return s, err
	}
	s.w, s.drops, s.pfc, s.buffer, s.packets = w, w.Drops, w.PFC, w.Buffer, w.Packets
	if s.packets != nil {
		s.pktRow.Path = make([]int32, 0, switchmodel.MaxPath+1)
	}
	s.eng = switchmodel.NewEngine()
	s.net = switchmodel.NewNetwork(s.eng, switchmodel.Options{
		Seed:      cfg.Seed,
		FabricBDP: cfg.BDP(),
		Observers: switchmodel.Observers{Drops: s, PFC: s, Buffer: s, Deliveries: s},
	})
	if err := s.build(); err != nil {
		return s, err
	}
	s.hid = s.eng.Register(s)
	return s, nil
}

// build instantiates the Clos: hosts first, then switches, so network node ids equal
// Clos node indices and host indices equal host ids.
func (s *sim) build() error {
	c := s.pr.Clos
	nodes := make([]switchmodel.Node, len(c.Nodes))
	for i, n := range c.Nodes {
		switch n.Tier {
		case records.TierHost:
			h, err := s.net.AddHost(n.Name)
			if err != nil {
				return err
			}
			nodes[i] = h
		default:
			ec := s.cfg.ECMP(n.Name)
			b, err := ecmp.NewBalancer(ec)
			if err != nil {
				return fmt.Errorf("%s: %w", n.Name, err)
			}
			sw, err := s.net.AddSwitch(n.Name, modelTier(n.Tier), &s.cfg.Switch, b)
			if err != nil {
				return err
			}
			nodes[i] = sw
		}
		if nodes[i].ID() != int32(i) {
			return fmt.Errorf("replay: node %s got id %d, want %d", n.Name, nodes[i].ID(), i)
		}
	}
	for i, n := range c.Nodes {
		for pi, p := range n.Ports {
			if p.Peer < i {
				continue // connected from the peer's side
			}
			pa, pb, err := s.net.Connect(nodes[i], nodes[p.Peer], switchmodel.LinkSpec{Speed: p.Link.Speed, PropagationDelay: p.Link.PropagationDelay})
			if err != nil {
				return err
			}
			if pa != pi || pb != p.PeerPort {
				return fmt.Errorf("replay: link %s:%d-%s:%d numbered %d-%d", n.Name, pi, c.Nodes[p.Peer].Name, p.PeerPort, pa, pb)
			}
		}
	}
	for i, n := range c.Nodes {
		sw, ok := nodes[i].(*switchmodel.Switch)
		if !ok {
			continue
		}
		// One set per distinct next-hop list.
		sets := map[string]int{}
		for dst := int32(0); dst < int32(c.Grid.Hosts()); dst++ {
			hops := c.NextHops(i, dst)
			key := fmt.Sprint(hops)
			set, ok := sets[key]
			if !ok {
				var err error
				if set, err = sw.AddEqualCostSet(hops); err != nil {
					return fmt.Errorf("%s: %w", n.Name, err)
				}
				sets[key] = set
			}
			if err := sw.SetRoute(dst, set); err != nil {
				return fmt.Errorf("%s: %w", n.Name, err)
			}
		}
	}
	warns, err := s.net.Start()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	s.pr.warnOnce.Do(func() {
		if s.pr.Opt.Warn != nil {
			for _, w := range warns {
				s.pr.Opt.Warn(w)
			}
		}
	})
	return nil
}

func modelTier(t records.Tier) switchmodel.Tier {
	switch t {
	case records.TierRack:
		return switchmodel.TierRack
	case records.TierFabric:
		return switchmodel.TierFabric
	case records.TierSpine:
		return switchmodel.TierSpine
	}
	return switchmodel.TierNone
}

// run streams the trace into the network and simulates until drained or the drain
// limit.
func (s *sim) run() error {
	opt := &s.pr.Opt
	r, err := ingest.Open(opt.Traces, ingest.Options{ReorderWindow: opt.ReorderWindow, InOrder: s.pr.Summary.InOrderFiles()})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	s.feed = newFeed(s.pr, r)
	s.wallStart = time.Now()
	s.advance()
	if s.next != nil {
		s.eng.Schedule(s.next.at, s.hid, 0, 0)
	}
	// Run until the injector has fed the last packet (it stops the engine then), then
	// drain until the network is empty or MaxDrain has passed since.
	s.eng.Run()
	if s.doneInjecting && s.readErr == nil && s.obsErr == nil {
		s.net.Drain(s.lastInj + opt.MaxDrain)
	}
	if s.readErr != nil {
		return fmt.Errorf("%w: %w", ErrInput, s.readErr)
	}
	if s.obsErr != nil {
		return s.obsErr
	}
	s.wall = time.Since(s.wallStart)
	s.progress(true)
	return nil
}

// advance takes the next arrival from the feed into s.next.
func (s *sim) advance() {
	a, err := s.feed.Next()
	if err != nil {
		s.readErr = err
		s.eng.Stop()
	}
	s.next = a
}

// Handle is the injector's event: inject s.next, take the following packet and
// schedule it; after the last one, stop the engine so run can start the drain.
func (s *sim) Handle(now units.Time, kind int32, arg int64) {
	s.inject(now, s.next)
	s.trace.replayed++
	if s.trace.replayed&0xffff == 0 {
		s.progress(false)
	}
	s.advance()
	if s.next != nil {
		s.eng.Schedule(s.next.at, s.hid, 0, 0)
	} else if s.readErr == nil {
		s.lastInj = now
		s.doneInjecting = true
		s.eng.Stop()
	}
}

func (s *sim) progress(done bool) {
	if s.pr.Opt.Progress == nil {
		return
	}
	s.pr.Opt.Progress(Progress{Method: s.cfg.Switch.EcmpHashMethod.String(), Injected: s.trace.replayed,
		Total: s.pr.Summary.IPv4Packets, SimTime: s.eng.Now(), Done: done})
}

// inject hands arrival p to its source host's NIC (in MTU-sized pieces when it is
// longer than the MTU and --oversize is split), or counts it (intra-host, or oversize
// and dropped). A flow's first packet creates its record.
func (s *sim) inject(now units.Time, p *arrival) {
	fid, src, dst := p.fid, p.src, p.dst
	if fid == noFlow {
		s.trace.intraHost++
		return
	}
	if int(fid) == len(s.flows) {
		s.flows = append(s.flows, flowState{tuple: p.tuple(), dscp: p.dscp, src: src, dst: dst, first: now,
			rackMember: -1, fabricMember: -1, lastRack: -1, lastFabric: -1, delayMin: -1})
	}
	f := &s.flows[fid]
	f.last = now
	key := ecmp.MakeKey(p.saddr, p.daddr, p.proto, p.sport, p.dport, p.laterFrag)
	length := int32(p.length)
	traceIndex := p.traceIndex
	if length > s.mtu {
		s.trace.oversize++
		if s.pr.Opt.Oversize == OversizeDrop {
			f.packets++
			f.bytes += int64(length)
			f.dropped++
			s.trace.oversizeDropped++
			if s.oversizeAt == nil {
				s.oversizeAt = make([][switchmodel.NumTC]int64, s.pr.Clos.Grid.Hosts())
			}
			s.oversizeAt[src][p.dscp>>3]++
			s.injected++
			s.writeOversizeDrop(now, f, fid, p, length, traceIndex)
			return
		}
	}
	host := s.net.Hosts()[src]
	for length > 0 {
		piece := min(length, s.mtu)
		length -= piece
		if piece != int32(p.length) {
			s.trace.oversizePieces++
		}
		id, pk := s.net.NewPacket()
		pk.FlowID = int64(fid)
		pk.TraceIndex = traceIndex
		pk.Key = key
		pk.Src, pk.Dst = src, dst
		pk.DSCP = p.dscp
		pk.ECN = p.ecn
		pk.Length = piece
		f.packets++
		f.bytes += int64(piece)
		s.injected++
		s.net.Inject(host, id)
	}
}

func (s *sim) writeOversizeDrop(now units.Time, f *flowState, fid int32, p *arrival, length int32, ti int64) {
	r := &s.dropRow
	*r = records.DropRow{TimePs: int64(now), Node: f.src, Tier: records.TierHost, Port: 0, TC: p.dscp >> 3,
		Reason: records.ReasonOversize, FlowID: int64(fid), Src: p.saddr, Dst: p.daddr, Proto: p.proto,
		Sport: p.sport, Dport: p.dport, Bytes: length, TraceIndex: ti}
	s.setErr(s.drops.Append(r))
	if s.packets != nil {
		s.writePacket(int64(fid), ti, p.dscp>>3, length, now, -1, records.FateDropped, false, []int32{f.src})
	}
}

func (s *sim) setErr(err error) {
	if err != nil && s.obsErr == nil {
		s.obsErr = err
		s.eng.Stop()
	}
}

var reasonOf = [switchmodel.NumDropReasons]records.Reason{
	switchmodel.DropHeadroom:    records.ReasonHeadroom,
	switchmodel.DropEgressLimit: records.ReasonEgressLimit,
	switchmodel.DropPoolFull:    records.ReasonPoolFull,
}

// Drop implements switchmodel.DropObserver.
func (s *sim) Drop(e switchmodel.DropEvent) {
	if e.Reason == switchmodel.DropNoRoute {
		s.setErr(fmt.Errorf("replay: %s dropped a packet with no route (topology bug)", s.pr.Clos.Nodes[e.Node].Name))
		return
	}
	p := e.Packet
	f := &s.flows[p.FlowID]
	f.dropped++
	s.members(f, p)
	k := &p.Key
	r := &s.dropRow
	*r = records.DropRow{TimePs: int64(e.Time), Node: e.Node, Tier: s.tier[e.Node], Port: e.Port, TC: e.TC,
		Reason: reasonOf[e.Reason], FlowID: p.FlowID, Src: f.tuple.Src, Dst: f.tuple.Dst, Proto: k[8],
		Sport: uint16(k[9])<<8 | uint16(k[10]), Dport: uint16(k[11])<<8 | uint16(k[12]), Bytes: p.Length, TraceIndex: p.TraceIndex}
	s.setErr(s.drops.Append(r))
	if s.packets != nil {
		s.writePathPacket(p, e.Time, -1, records.FateDropped, e.Node)
	}
}

// members records the flow's first members and counts path changes.
func (s *sim) members(f *flowState, p *switchmodel.Packet) {
	if !f.seen {
		f.seen = true
		f.rackMember, f.fabricMember = p.RackMember, p.FabricMember
	} else if (p.RackMember >= 0 && f.lastRack >= 0 && p.RackMember != f.lastRack) ||
		(p.FabricMember >= 0 && f.lastFabric >= 0 && p.FabricMember != f.lastFabric) {
		f.pathChanges++
	}
	if p.RackMember >= 0 {
		f.lastRack = p.RackMember
	}
	if p.FabricMember >= 0 {
		f.lastFabric = p.FabricMember
	}
}

// Delivered implements switchmodel.DeliveryObserver.
func (s *sim) Delivered(now units.Time, p *switchmodel.Packet) {
	f := &s.flows[p.FlowID]
	f.delivered++
	s.members(f, p)
	if p.Marked {
		f.ce++
	}
	d := int64(now - p.Inject)
	if f.delayMin < 0 || d < f.delayMin {
		f.delayMin = d
	}
	f.delayMax = max(f.delayMax, d)
	f.delaySum += d
	s.delay.Add(p.TC, d)
	if s.packets != nil {
		s.writePathPacket(p, p.Inject, int64(now), records.FateDelivered, p.Dst)
	}
}

func (s *sim) writePathPacket(p *switchmodel.Packet, inject units.Time, deliver int64, fate records.Fate, end int32) {
	s.hops = p.AppendPath(s.hops[:0])
	path := s.pktRow.Path[:0]
	for _, h := range s.hops {
		path = append(path, h.Node)
	}
	if len(path) == 0 || path[len(path)-1] != end {
		path = append(path, end)
	}
	s.writePacket(p.FlowID, p.TraceIndex, p.TC, p.Length, p.Inject, deliver, fate, p.Marked && fate == records.FateDelivered, path)
}

func (s *sim) writePacket(fid, ti int64, tc uint8, length int32, inject units.Time, deliver int64, fate records.Fate, ce bool, path []int32) {
	r := &s.pktRow
	r.TraceIndex, r.FlowID, r.TC, r.Bytes = ti, fid, tc, length
	r.InjectPs, r.DeliverPs, r.Fate, r.CE, r.Path = int64(inject), deliver, fate, ce, path
	s.setErr(s.packets.Append(r))
}

var pfcKind = [...]records.PFCEvent{
	switchmodel.PFCTxPause:  records.EventTxPause,
	switchmodel.PFCTxResume: records.EventTxResume,
	switchmodel.PFCRxPause:  records.EventRxPause,
	switchmodel.PFCRxResume: records.EventRxResume,
	switchmodel.PFCExpire:   records.EventExpire,
}

// PFC implements switchmodel.PFCObserver.
func (s *sim) PFC(e switchmodel.PFCEvent) {
	r := &s.pfcRow
	*r = records.PFCRow{TimePs: int64(e.Time), Node: e.Node, Port: e.Port, Peer: e.Peer, TC: e.TC, Event: pfcKind[e.Kind], Quanta: e.Quanta}
	s.setErr(s.pfc.Append(r))
}

// BufferSample implements switchmodel.BufferObserver.
func (s *sim) BufferSample(b switchmodel.BufferSample) {
	r := &s.bufRow
	*r = records.BufferRow{TimePs: int64(b.Time), Node: b.Switch, Pool: uint8(b.Pool), SharedBytes: b.Shared,
		HeadroomBytes: b.Headroom, IngressBytes: b.Ingress, EgressBytes: b.Egress}
	s.setErr(s.buffer.Append(r))
}

// close writes the end-of-run files and closes every writer.
func (s *sim) close() error {
	if s.feed != nil {
		s.feed.Close()
	}
	if s.w == nil {
		return nil
	}
	var err error
	if s.net != nil && s.obsErr == nil && s.readErr == nil {
		if s.packets != nil {
			s.net.ForEachOutstanding(func(n switchmodel.Node, p *switchmodel.Packet) {
				s.writePathPacket(p, p.Inject, -1, records.FateUndrained, n.ID())
			})
		}
		err = s.writeEndFiles()
	}
	rows, cerr := s.w.Close()
	s.rows = rows
	return errors.Join(err, s.obsErr, cerr)
}

// writeEndFiles writes ports, loadbalance, flows and delay.
func (s *sim) writeEndFiles() error {
	var pr records.PortRow
	for _, n := range s.net.Nodes() {
		for port := 0; port < n.NumPorts(); port++ {
			info := n.PortInfo(port)
			st := n.PortStats(port)
			for tc := range st {
				t := &st[tc]
				pr = records.PortRow{Node: n.ID(), Tier: s.tier[n.ID()], Port: int32(port), Peer: info.Peer, TC: uint8(tc),
					RxPackets: t.RxPackets, RxBytes: t.RxBytes, TxPackets: t.TxPackets, TxBytes: t.TxBytes,
					ECNMarked: t.ECNMarked, QueueWatermarkBytes: t.WatermarkBytes, PFCPauseTx: t.PFCPauseTx,
					PFCResumeTx: t.PFCResumeTx, PFCPauseRx: t.PFCPauseRx, PFCResumeRx: t.PFCResumeRx, PausedPs: int64(t.PausedPs)}
				for reason, n := range t.Drops {
					if switchmodel.DropReason(reason) != switchmodel.DropNoRoute {
						pr.Drops[reasonOf[reason]] += n
					}
				}
				if int(n.ID()) < len(s.oversizeAt) && port == 0 {
					pr.Drops[records.ReasonOversize] = s.oversizeAt[n.ID()][tc]
				}
				if err := s.w.Ports.Append(&pr); err != nil {
					return err
				}
			}
		}
	}
	if err := s.writeLoadBalance(); err != nil {
		return err
	}
	if err := s.writeFlows(); err != nil {
		return err
	}
	return s.delay.WriteRows(s.w.Delay)
}

func (s *sim) writeLoadBalance() error {
	w := s.w.LoadBalance
	hm, _ := records.ParseHashMethod(s.cfg.Switch.EcmpHashMethod.String())
	for _, sw := range s.net.Switches() {
		b, ok := sw.Selector().(*ecmp.Balancer)
		if !ok {
			continue
		}
		recs := b.Records()
		// Selector set id -> switch set index.
		bySel := map[int]int{}
		for i := 0; i < sw.NumSets(); i++ {
			if id := sw.SelectorSet(i); id >= 0 {
				bySel[id] = i
			}
		}
		for _, r := range recs {
			set := bySel[r.Set]
			port := sw.EqualCostSet(set)[r.Member]
			row := records.LoadBalanceRow{Node: sw.ID(), Tier: s.tier[sw.ID()], Set: int32(set), Member: int32(r.Member),
				Port: int32(port), Peer: sw.PortInfo(port).Peer, Flows: r.Flows, Flowlets: r.Flowlets, Packets: r.Packets,
				Bytes: r.Bytes, MovedIn: r.MovedIn, MovedOut: r.MovedOut, HashMethod: hm}
			if err := w.Append(&row); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *sim) writeFlows() error {
	for i := range s.flows {
		f := &s.flows[i]
		row := records.FlowRow{FlowID: int64(i), Src: f.tuple.Src, Dst: f.tuple.Dst, Proto: f.tuple.Proto,
			Sport: f.tuple.SrcPort, Dport: f.tuple.DstPort, DSCP: f.dscp, TC: f.dscp >> 3, SrcHost: f.src, DstHost: f.dst,
			Packets: f.packets, Bytes: f.bytes, Delivered: f.delivered, Dropped: f.dropped,
			Undrained: f.packets - f.delivered - f.dropped, CEMarked: f.ce, FirstPs: int64(f.first), LastPs: int64(f.last),
			RackMember: int32(f.rackMember), FabricMember: int32(f.fabricMember), PathChanges: f.pathChanges}
		if f.delivered > 0 {
			row.DelayMinPs, row.DelayMaxPs, row.DelayMeanPs = f.delayMin, f.delayMax, f.delaySum/f.delivered
		}
		if err := s.w.Flows.Append(&row); err != nil {
			return err
		}
	}
	return nil
}

// runJSON assembles run.json.
func (s *sim) runJSON() (*records.Run, error) {
	cfgJSON, err := json.Marshal(s.cfg)
	if err != nil {
		return nil, err
	}
	trace, err := traceJSON(s.pr.Summary, &s.trace)
	if err != nil {
		return nil, err
	}
	hm, _ := records.ParseHashMethod(s.cfg.Switch.EcmpHashMethod.String())
	c := s.pr.Clos
	topo := records.Topology{Nodes: len(c.Nodes), Links: c.Links(), Hosts: c.Grid.Hosts(),
		BDPBytes: int64(s.cfg.BDP()), BaseRTTPs: int64(s.cfg.BaseRTT())}
	for _, sw := range s.net.Switches() {
		topo.Switches = append(topo.Switches, records.Switch{Name: sw.Name(), Tier: s.tier[sw.ID()],
			BandwidthBps: int64(sw.Bandwidth()), SwitchingCapacityBps: int64(sw.SwitchingCapacity()), Oversubscribed: sw.Oversubscribed()})
	}
	k := s.net.Counters()
	sim := records.Simulation{SimTimePs: int64(s.eng.Now()), WallS: s.wall.Seconds(), Events: int64(k.Events),
		PacketHops: k.PacketHops, Injected: s.injected, Delivered: k.Delivered, Dropped: map[records.Reason]int64{},
		CEMarked: k.CEMarked, PFCFrames: k.PFCFrames, Undrained: map[string]int64{}}
	for r := range records.NumReasons {
		sim.Dropped[records.Reason(r)] = 0
	}
	for r, n := range k.Dropped {
		if switchmodel.DropReason(r) != switchmodel.DropNoRoute {
			sim.Dropped[reasonOf[r]] += n
		}
	}
	sim.Dropped[records.ReasonOversize] += s.trace.oversizeDropped
	sim.LosslessDrops = sim.Dropped[records.ReasonHeadroom]
	for _, n := range s.net.Nodes() {
		if b := n.Buffered() + n.InFlight(); b > 0 {
			sim.Undrained[n.Name()] = int64(b)
		}
	}
	if got := sim.Delivered + sim.DroppedTotal() + sim.UndrainedTotal(); got != sim.Injected {
		return nil, fmt.Errorf("replay: conservation broken: injected %d != delivered %d + dropped %d + undrained %d",
			sim.Injected, sim.Delivered, sim.DroppedTotal(), sim.UndrainedTotal())
	}
	rows := s.rows
	return &records.Run{Version: s.pr.Opt.Version, SchemaVersion: records.SchemaVersion, Command: s.pr.Opt.Command,
		Seed: uint64(s.cfg.Seed), HashMethod: hm, Config: cfgJSON, Topology: topo, Trace: trace, Simulation: sim, Records: rows}, nil
}

// flowTable maps 5-tuples to flow ids: open addressing with linear probing over
// slots that hold the packed tuple inline (one cache line visit per lookup), at most
// half full, plus a one-entry cache of the last flow (captures come in bursts).
type flowTable struct {
	slots []flowSlot
	n     int
	shift uint // 64 - log2(len(slots))
	last  flowSlot
}

// flowSlot holds a packed tuple and its flow id + 1 (0: empty).
type flowSlot struct {
	a, b uint64
	fid  int32
}

// packTuple packs a packet's 5-tuple into two words.
func packTuple(p *ingest.Packet) (a, b uint64) {
	a = uint64(p.Src[0])<<56 | uint64(p.Src[1])<<48 | uint64(p.Src[2])<<40 | uint64(p.Src[3])<<32 |
		uint64(p.Dst[0])<<24 | uint64(p.Dst[1])<<16 | uint64(p.Dst[2])<<8 | uint64(p.Dst[3])
	b = uint64(p.SrcPort)<<24 | uint64(p.DstPort)<<8 | uint64(p.Proto)
	return a, b
}

func (t *flowTable) home(a, b uint64) int {
	h := a*0x9E3779B97F4A7C15 ^ (b+0x632BE59BD9B4E019)*0xC2B2AE3D27D4EB4F
	return int((h ^ h>>31) >> t.shift)
}

// find returns the packet's flow id, or -1 and the empty slot where insert puts it.
func (t *flowTable) find(p *ingest.Packet) (fid int32, slot int) {
	a, b := packTuple(p)
	if t.last.fid != 0 && t.last.a == a && t.last.b == b {
		return t.last.fid - 1, -1
	}
	if t.slots == nil {
		t.slots = make([]flowSlot, 1024)
		t.shift = 64 - 10
	}
	mask := len(t.slots) - 1
	for i := t.home(a, b); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.fid == 0 {
			return -1, i
		}
		if s.a == a && s.b == b {
			t.last = *s
			return s.fid - 1, i
		}
	}
}

// insert adds the packet's flow as fid at the slot find returned.
func (t *flowTable) insert(slot int, p *ingest.Packet, fid int32) {
	a, b := packTuple(p)
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]flowSlot, 2*len(old))
		t.shift--
		for _, s := range old {
			if s.fid != 0 {
				t.slots[t.free(s.a, s.b)] = s
			}
		}
		slot = t.free(a, b)
	}
	t.slots[slot] = flowSlot{a: a, b: b, fid: fid + 1}
	t.n++
	t.last = t.slots[slot]
}

// free returns the first empty slot of a's and b's probe sequence.
func (t *flowTable) free(a, b uint64) int {
	mask := len(t.slots) - 1
	i := t.home(a, b)
	for t.slots[i].fid != 0 {
		i = (i + 1) & mask
	}
	return i
}
