package replay

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
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
	hm, err := RecordHashMethod(s.cfg.Switch.EcmpHashMethod)
	if err != nil {
		return nil, err
	}
	c := s.pr.Clos
	topo := records.Topology{Nodes: len(c.Nodes), Links: c.Links(), Hosts: c.Grid.Hosts(),
		BDPBytes: int64(s.cfg.BDP()), BaseRTTPs: int64(s.cfg.BaseRTT())}
	for _, sw := range s.net.Switches() {
		topo.Switches = append(topo.Switches, records.Switch{Name: sw.Name(), Tier: s.tier[sw.ID()],
			BandwidthBps: int64(sw.Bandwidth()), SwitchingCapacityBps: int64(sw.SwitchingCapacity()), Oversubscribed: sw.Oversubscribed()})
	}
	k := s.net.Counters()
	sim := records.Simulation{SimTimePs: int64(s.eng.Now()), WallS: s.wall.Seconds(), Events: int64(k.Events),
		PacketHops: k.PacketHops, Injected: s.injected, Delivered: k.Delivered, Dropped: map[records.DropReason]int64{},
		CEMarked: k.CEMarked, PFCFrames: k.PFCFrames, Undrained: map[string]int64{}}
	for r := range records.NumDropReasons {
		sim.Dropped[records.DropReason(r)] = 0
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
		Seed: uint64(s.cfg.Seed), HashMethod: hm, Transport: records.TransportOpen, Options: s.runOptions(),
		Config: cfgJSON, Topology: topo, Trace: trace, Simulation: sim, Records: rows}, nil
}

// runOptions are the options the run used, defaults filled in.
func (s *sim) runOptions() records.RunOptions {
	o := &s.pr.Opt
	prefix := o.RackPrefix
	if prefix == 0 && s.pr.HostMap.Mode == MapSubnet {
		prefix = DefaultRackPrefix
	}
	return records.RunOptions{Speedup: o.Speedup, Hosts: s.pr.HostMap.Mode, RackPrefix: prefix, Oversize: o.Oversize,
		MaxDrainPs: int64(o.MaxDrain), LB: s.cfg.Switch.LoadBalancingMethod.String(), Hash: s.cfg.Switch.EcmpHashMethod.String()}
}
