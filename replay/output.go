package replay

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
	"github.com/tracefabric/tracefabric/switchmodel/transport"
)

// close writes the end-of-run files and closes every writer.
func (s *sim) close() error {
	if s.feed != nil {
		s.feed.Close()
	}
	if s.w == nil {
		return nil
	}
	var err error
	if s.net != nil && s.obsErr == nil && s.readErr == nil && !s.retry {
		s.undrained = map[int32]int64{}
		s.net.ForEachOutstanding(func(n switchmodel.Node, p *switchmodel.Packet) {
			if p.Class.Control() {
				s.ctlUndrained[p.Class]++
				return
			}
			s.undrained[n.ID()]++
			s.flows[p.FlowID].undrained++
			if s.packets != nil {
				s.writePathPacket(p, p.Inject, -1, records.FateUndrained, n.ID())
			}
		})
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
					pr.Drops[reasonOf[reason]] += n
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
	s.settleAll()
	if err := s.writeFlows(); err != nil {
		return err
	}
	return s.delay.WriteRows(s.w.Delay)
}

func (s *sim) writeLoadBalance() error {
	w := s.w.LoadBalance
	hm, err := RecordHashMethod(s.cfg.Switch.EcmpHashMethod)
	if err != nil {
		return err
	}
	for _, sw := range s.net.Switches() {
		b, ok := sw.Selector().(*ecmp.Balancer)
		if !ok {
			continue
		}
		recs := b.Records()
		bySel := setsBySelector(sw)
		for i := 0; i < len(recs); {
			r := recs[i]
			set := bySel[r.Set]
			member := sw.SlotMember(set, r.Member)
			// A weighted set's records are per group-table slot: sum each member's
			// slots (they are consecutive, docs/model.md#routing).
			for i++; i < len(recs) && recs[i].Set == r.Set && sw.SlotMember(set, recs[i].Member) == member; i++ {
				q := recs[i]
				r.Flows += q.Flows
				r.Flowlets += q.Flowlets
				r.Packets += q.Packets
				r.Bytes += q.Bytes
				r.MovedIn += q.MovedIn
				r.MovedOut += q.MovedOut
				r.FlowsMovedIn += q.FlowsMovedIn
				r.FlowsMovedOut += q.FlowsMovedOut
			}
			port := sw.EqualCostSet(set)[member]
			row := records.LoadBalanceRow{Node: sw.ID(), Tier: s.tier[sw.ID()], Set: int32(set), Member: int32(member),
				Port: int32(port), Peer: sw.PortInfo(port).Peer, Flows: r.Flows, Flowlets: r.Flowlets, Packets: r.Packets,
				Bytes: r.Bytes, MovedIn: r.MovedIn, MovedOut: r.MovedOut, FlowsMovedIn: r.FlowsMovedIn,
				FlowsMovedOut: r.FlowsMovedOut, HashMethod: hm}
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
			Sport: f.tuple.SrcPort, Dport: f.tuple.DstPort, DSCP: f.dscp, TC: s.classes.TC(f.dscp), SrcHost: f.src, DstHost: f.dst,
			Packets: f.packets, Bytes: f.bytes, SizeBytes: f.size, Delivered: f.delivered, Dropped: f.dropped,
			Undrained: f.undrained, CEMarked: f.ce, FirstPs: int64(f.first), LastPs: int64(f.last),
			RackMember: int32(f.rackMember), FabricMember: int32(f.fabricMember), PathChanges: f.pathChanges,
			Transport: transportOf[f.kind]}
		if f.size > 0 {
			row.IdealFctPs = int64(f.ideal.last - f.start)
		}
		if f.delivered > 0 {
			row.DelayMinPs, row.DelayMaxPs, row.DelayMeanPs = f.delayMin, f.delayMax, f.delaySum/f.delivered
		}
		if f.closed {
			st, ok := s.layer.Stats(int32(i))
			if !ok { // every captured packet of the flow was replaced: no data, no sender
				st = transport.FlowStats{Kind: f.kind, Complete: f.oversize == 0}
			}
			row.Packets += st.Sent
			row.Bytes += st.SentBytes
			row.Retransmits, row.Timeouts, row.CongestionSignals = st.Retransmits, st.Timeouts, st.CongestionSignals
			row.Transport = transportOf[st.Kind] // TCP auto: the kind its first data segment decided
			s.retransmits += st.Retransmits
			s.timeouts += st.Timeouts
			switch {
			case st.Complete && f.oversize == 0 && s.held[int32(i)] == nil: // (held: causality kept data back to the end)
				row.Completion, row.FctPs = records.CompletionComplete, max(0, int64(st.LastDelivery-f.start))
			case f.oversize > 0:
				row.Completion = records.CompletionDropped // --oversize drop took part of it at the source
			case f.undrained > 0:
				row.Completion = records.CompletionUndrained
			default:
				row.Completion = records.CompletionMaxDrain
			}
		} else {
			switch {
			case f.dropped > 0:
				row.Completion = records.CompletionDropped
			case f.undrained > 0:
				row.Completion = records.CompletionUndrained
			default:
				row.Completion, row.FctPs = records.CompletionComplete, int64(f.lastDeliver-f.start)
			}
		}
		if row.Packets != row.Delivered+row.Dropped+row.Undrained {
			return fmt.Errorf("replay: flow %d: conservation broken: %d packets != %d delivered + %d dropped + %d undrained",
				i, row.Packets, row.Delivered, row.Dropped, row.Undrained)
		}
		if row.Completion == records.CompletionComplete && row.FctPs < row.IdealFctPs {
			return fmt.Errorf("replay: flow %d completed in %d ps, faster than its ideal %d ps", i, row.FctPs, row.IdealFctPs)
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
	trace, err := traceJSON(s.pr.Summary, &s.trace, s.pr.Idle, s.pr.T0)
	if err != nil {
		return nil, err
	}
	hm, err := RecordHashMethod(s.cfg.Switch.EcmpHashMethod)
	if err != nil {
		return nil, err
	}
	t := s.pr.Topo
	rtt, bdp := t.BaseRTT(s.cfg)
	topo := records.Topology{Shape: t.Shape, File: t.Source, Nodes: len(t.Nodes), Links: len(t.Links), Hosts: t.Hosts,
		BDPBytes: int64(bdp), BaseRTTPs: int64(rtt)}
	_, profs, _ := t.SwitchConfigs(s.cfg)
	for _, sw := range s.net.Switches() {
		n := &t.Nodes[sw.ID()]
		topo.Switches = append(topo.Switches, records.Switch{Name: sw.Name(), ID: sw.ID(), Tier: s.tier[sw.ID()],
			Role: n.Role, Level: n.Level, Group: n.Group, Pod: n.Pod, Plane: n.Plane, Profile: profs[sw.ID()],
			BandwidthBps: int64(sw.Bandwidth()), SwitchingCapacityBps: int64(sw.SwitchingCapacity()), Oversubscribed: sw.Oversubscribed()})
	}
	for _, sw := range s.net.Switches() {
		for set := range sw.NumSets() {
			if w := sw.MemberWeights(set); w != nil {
				topo.WeightedSets = append(topo.WeightedSets, records.WeightedSet{Node: sw.ID(), Set: int32(set), Weights: w})
			}
		}
	}
	for i := range t.Links {
		l := &t.Links[i]
		topo.LinkList = append(topo.LinkList, records.Link{A: l.A.Node, APort: l.A.Port, B: l.B.Node, BPort: l.B.Port,
			SpeedBps: int64(l.Speed), DelayPs: int64(l.Delay)})
	}
	k := s.net.Counters()
	th := s.threads
	sim := records.Simulation{SimTimePs: int64(s.eng.Now()), WallS: s.wall.Seconds(), CPUS: s.cpu.Seconds(), Threads: &th, Events: int64(k.Events),
		PacketHops: k.PacketHops, DataPacketHops: k.DataPacketHops, Injected: k.Injected + s.trace.oversizeDropped,
		Delivered: k.Delivered, Dropped: map[records.DropReason]int64{},
		CEMarked: k.CEMarked, PFCFrames: k.PFCFrames, Undrained: map[string]int64{}}
	sim.Retransmits, sim.Timeouts = s.retransmits, s.timeouts
	transportMode := records.ModeOpen
	if s.layer != nil {
		transportMode = records.ModeClosed
		sim.ControlPackets = map[records.PacketKind]records.ControlCount{}
		gen := s.layer.Generated()
		for c := switchmodel.Ack; c < switchmodel.NumClasses; c++ {
			cc := records.ControlCount{Generated: gen[c], Delivered: k.Control[c].Delivered, Undrained: s.ctlUndrained[c]}
			for _, d := range k.Control[c].Dropped {
				cc.Dropped += d
			}
			if cc.Generated != cc.Delivered+cc.Dropped+cc.Undrained {
				return nil, fmt.Errorf("replay: conservation broken: %v packets generated %d != delivered %d + dropped %d + undrained %d",
					c, cc.Generated, cc.Delivered, cc.Dropped, cc.Undrained)
			}
			sim.ControlPackets[kindOf[c]] = cc
		}
	}
	for r := range records.NumDropReasons {
		sim.Dropped[records.DropReason(r)] = 0
	}
	for r, n := range k.Dropped {
		sim.Dropped[reasonOf[r]] += n
	}
	sim.Dropped[records.ReasonOversize] += s.trace.oversizeDropped
	sim.LosslessDrops = sim.Dropped[records.ReasonHeadroom]
	for id, n := range s.undrained {
		sim.Undrained[s.net.Node(id).Name()] = n
	}
	if got := sim.Delivered + sim.DroppedTotal() + sim.UndrainedTotal(); got != sim.Injected {
		return nil, fmt.Errorf("replay: conservation broken: injected %d != delivered %d + dropped %d + undrained %d",
			sim.Injected, sim.Delivered, sim.DroppedTotal(), sim.UndrainedTotal())
	}
	rows := s.rows
	var load *records.OfferedLoad
	if s.load != nil {
		load = s.load.result().json(s.pr, s.load.bins)
	}
	repl := s.pr.repl.json()
	if repl != nil {
		repl.Packets = s.trace.arrivals
	}
	run := &records.Run{Version: s.pr.Opt.Version, SchemaVersion: records.SchemaVersion, Command: s.pr.Opt.Command,
		Seed: uint64(s.cfg.Seed), HashMethod: hm, Transport: transportMode, Options: s.runOptions(),
		Config: cfgJSON, Topology: topo, Trace: trace, Simulation: sim, OfferedLoad: load, Replication: repl, HostMapping: s.hostMappingJSON(), ClosedLoop: s.closedLoopJSON(), Records: rows}
	if s.ev != nil {
		run.Events = s.ev.eventsJSON()
	}
	if wd := &s.cfg.Switch.PfcWatchdog; wd.Enabled || len(s.storms) > 0 {
		run.PfcWatchdog = &records.Watchdog{Action: wd.Action.String(), DetectionTimePs: int64(wd.DetectionTime),
			RestorationTimePs: int64(wd.RestorationTime), Storms: append([]records.Storm{}, s.storms...)}
	}
	for i, d := range s.net.Deadlocks() {
		rd := records.Deadlock{TC: d.TC, DetectedPs: int64(d.Detected), ResolvedPs: int64(d.Resolved)}
		if d.Resolved < 0 {
			rd.Undrained = s.net.DeadlockUndrained(i)
		}
		for _, h := range d.Ports {
			info := s.net.Node(h.Node).PortInfo(int(h.Port))
			rd.Ports = append(rd.Ports, records.DeadlockPort{Node: t.Nodes[h.Node].Name, Port: h.Port, Peer: t.Nodes[info.Peer].Name})
		}
		run.Deadlocks = append(run.Deadlocks, rd)
	}
	return run, nil
}

// hostMappingJSON is run.json's host_mapping: the mapping's counts and, per rack,
// the endpoints of the run's flows (copies included).
func (s *sim) hostMappingJSON() *records.HostMapping {
	hm := s.pr.HostMap
	h := &records.HostMapping{Mode: s.runOptions().Hosts, Endpoints: hm.Len(), Warning: hm.Unused()}
	if hm.Mode == MapSubnet {
		h.Subnet = &records.SubnetGroups{Groups: hm.Groups, Moved: hm.Moved, Split: hm.Split}
	}
	h.Racks = make([]records.MappedRack, len(hm.Racks))
	for i, r := range hm.Racks {
		h.Racks[i] = records.MappedRack{Name: r.Name, Hosts: len(r.Hosts)}
	}
	seen := map[ipaddr.Addr]bool{}
	hosts := map[int32]bool{}
	for i := range s.flows {
		f := &s.flows[i]
		for _, e := range [2]struct {
			a    ipaddr.Addr
			host int32
		}{{f.tuple.Src, f.src}, {f.tuple.Dst, f.dst}} {
			r := &h.Racks[hm.RackOf(e.host)]
			if !seen[e.a] {
				seen[e.a] = true
				r.Endpoints++
			}
			if !hosts[e.host] {
				hosts[e.host] = true
				r.HostsUsed++
				h.HostsUsed++
			}
		}
	}
	for _, r := range h.Racks {
		if r.Endpoints > 0 {
			h.RacksUsed++
		}
	}
	return h
}

// closedLoopJSON is run.json's closed_loop: the flows by what became of them (nil
// open loop).
func (s *sim) closedLoopJSON() *records.ClosedLoop {
	if s.layer == nil {
		return nil
	}
	c := &records.ClosedLoop{Flows: int64(len(s.flows)), Fallback: map[string]int64{}}
	for _, r := range records.FallbackReasons {
		c.Fallback[r] = 0
	}
	for i := range s.flows {
		f := &s.flows[i]
		switch {
		case f.closed && f.registered:
			c.Closed++
		case f.closed:
			c.ControlOnly++
		case f.fallback != fallbackNone:
			c.Fallback[fallbackNames[f.fallback]]++
		default:
			c.Open++
		}
	}
	return c
}

// runOptions are the options the run used, defaults filled in, paths made absolute.
func (s *sim) runOptions() records.RunOptions {
	o := s.pr.Opt.runOptions()
	o.LB, o.Hash = s.cfg.Switch.LoadBalancingMethod.String(), s.cfg.Switch.EcmpHashMethod.String()
	return o
}

// setsBySelector maps a switch's Selector set ids to its set indices (the sets with
// more than one member).
func setsBySelector(sw *switchmodel.Switch) map[int]int {
	bySel := map[int]int{}
	for i := 0; i < sw.NumSets(); i++ {
		if id := sw.SelectorSet(i); id >= 0 {
			bySel[id] = i
		}
	}
	return bySel
}
