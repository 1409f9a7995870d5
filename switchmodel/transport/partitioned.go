package transport

import "github.com/tracefabric/tracefabric/switchmodel"

// The Layer on the partitioned engine (docs/parallel.md section 2, item 12): one
// shard per partition, each flow split into its sender's half (in the shard of its
// source host's partition) and its receiver's half (its destination's). Which half
// touches which field of a flow:
//
//   - The sender's half (Offer, an ACK/NAK/CNP reaching the source, Departed, the
//     timer and pacing events, attributed to the source host): segs, endUnits,
//     offered, nxt, firstAvail, decided, kind, rtoAt, rtoEv, sent, sentBytes,
//     lastSend, retransmits, timeouts, signals, every TCP window field (cwnd ...
//     usageEnd), the DCQCN rate rp, nextAvail, paceEv, inNIC, progress; its
//     shard's active count; its transport events.
//   - The receiver's half (data reaching the destination, the NAK re-send event,
//     attributed to the destination host): rcvNxt, ooo, lastNak, nakAt, nakEv,
//     nakDscp, lastCnp, lastAdvance, dups, watch; its shard's generated counts; its
//     CNP events and its advances (below).
//   - Both read id, spec, smss' source (spec.SMSS), ctlFirst, set by NewFlow at a
//     barrier. kind, which AutoTCP changes at the sender's first payload segment, is
//     read by the receiver only as "is it DCQCN", which spec.Kind says (AutoTCP
//     switches NewReno to DCTCP, never to or from DCQCN): the receiver reads spec.
//
// Nothing else crosses: the halves talk through packets on links (the engine's
// cut links) and the barrier. Watch/SegmentsDelivered, the one exchange between the
// application's Offer and the receiver, becomes the advance log: Watch records the
// watched segment on the coordinator (watches), every in-order advance of a watched
// flow's receiver is logged (Network.NoteAgent) and AgentNoted, on the coordinator
// in the sequential run's order, tells the watcher exactly when the sequential
// receiver would have. Transport events are logged the same way. Idle is the
// conjunction of the shards' (evaluated by the engine per partition: PartIdle).
// Expect (causality) is not partitioned: it stays 0 in a partitioned run.

// shard is the Layer's state in one partition: the partition's network and engine,
// the flows whose sender is there holding a segment not yet acknowledged (active),
// and the control packets its receivers generated.
type shard struct {
	net       *switchmodel.Network
	eng       *switchmodel.Engine
	active    int
	generated ControlStats
}

// AgentNote kinds.
const (
	noteAdvance uint8 = iota // A flow's receiver holds every segment before B
	noteEvent                // noteEvent + k: transport event k (A flow, B host, Value)
)

var _ switchmodel.PartitionedAgent = (*Layer)(nil)

// Partition implements switchmodel.PartitionedAgent: the run is about to be made as
// parts partitions (of: every node's; the hosts' Network is their partition's), or,
// with of nil, it ended: the shards fold back into the sequential one.
func (l *Layer) Partition(of []int32, parts int) {
	if of == nil {
		for _, sh := range l.shards {
			l.seq.active += sh.active
			for c := range l.seq.generated {
				l.seq.generated[c] += sh.generated[c]
			}
		}
		for id, f := range l.flows {
			if f != nil {
				f.snd, f.rcv = &l.seq, &l.seq
				f.watch = l.watches[id]
			}
		}
		l.shards, l.of, l.watches = nil, nil, nil
		return
	}
	l.shards, l.of = make([]*shard, parts), of
	for p := range l.shards {
		l.shards[p] = &shard{}
	}
	for _, h := range l.hosts {
		sh := l.shards[of[h.ID()]]
		sh.net, sh.eng = h.Network(), h.Network().Engine()
	}
	for _, f := range l.flows {
		if f != nil {
			l.placeFlow(f)
		}
	}
	// The sequential shard's counts stay in it (the shards start at 0).
}

// placeFlow puts f's halves into their hosts' shards and moves its watch to the
// coordinator; its receiver logs every advance while a watcher listens.
func (l *Layer) placeFlow(f *flow) {
	f.snd = l.shards[l.of[l.hosts[f.spec.Src].ID()]]
	f.rcv = l.shards[l.of[l.hosts[f.spec.Dst].ID()]]
	for int(f.id) >= len(l.watches) {
		l.watches = append(l.watches, -1)
	}
	l.watches[f.id] = f.watch
	f.watch = -1
	if l.watcher != nil {
		f.watch = 0 // any advance passes it: delivered logs it
	}
}

// PartIdle implements switchmodel.PartitionedAgent: partition part's share of Idle.
func (l *Layer) PartIdle(part int32) bool { return l.shards[part].active == 0 && l.expected == 0 }

// AgentNoted implements switchmodel.PartitionedAgent: a logged advance or transport
// event, on the coordinator, in the sequential run's order.
func (l *Layer) AgentNoted(a switchmodel.AgentNote) {
	if a.Kind == noteAdvance {
		if w := l.watches[a.A]; w >= 0 && a.B > w {
			l.watches[a.A] = -1
			l.watcher.SegmentsDelivered(a.Time, a.A, a.B)
		}
		return
	}
	l.obs.TransportEvent(Event{Time: a.Time, Flow: a.A, Host: a.B, Kind: EventKind(a.Kind - noteEvent), Value: a.Value})
}
