package switchmodel

import (
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// Node is a switch or a host.
type Node interface {
	ID() int32
	Name() string
	NumPorts() int
	// PortInfo describes port i and its link.
	PortInfo(i int) PortInfo
	// PortStats returns port i's counters per traffic class, paused time through Now.
	PortStats(i int) [NumTC]TCStats
	// Buffered is the number of data packets the node holds (queued or waiting for
	// admission), not counting frames on its outgoing links.
	Buffered() int
	// InFlight is the number of data packets on the node's outgoing links.
	InFlight() int
}

// PortInfo describes one port and its link.
type PortInfo struct {
	Speed            units.BitRate
	PropagationDelay units.Time
	Peer             int32 // peer node id
	PeerPort         int32
}

// nodeImpl is implemented by *Switch and *Host.
type nodeImpl interface {
	Node
	EventHandler
	core() *nodeCore
	// receive is called when a data frame's last bit arrived on port pi.
	receive(now units.Time, pi int32, id PacketID, p *Packet)
	// depart is called when a data frame starts transmitting on pt.
	depart(now units.Time, pt *port, id PacketID, p *Packet)
}

type nodeCore struct {
	net   *Network
	self  nodeImpl
	id    int32
	name  string
	h     HandlerID
	ports []*port
	// classes is the node's classification (docs/model.md#classification): a
	// switch's own table, the network's host table for a host.
	classes *config.ClassMap
}

func (c *nodeCore) core() *nodeCore { return c }

// ID is the node's id in its Network (dense, in creation order, switches and hosts
// alike).
func (c *nodeCore) ID() int32 { return c.id }

// Name is the node's name.
func (c *nodeCore) Name() string { return c.name }

// NumPorts is the number of connected ports.
func (c *nodeCore) NumPorts() int { return len(c.ports) }

// PortInfo describes port i.
func (c *nodeCore) PortInfo(i int) PortInfo {
	pt := c.ports[i]
	return PortInfo{Speed: pt.speed, PropagationDelay: pt.prop, Peer: pt.peer.core.id, PeerPort: pt.peer.idx}
}

// PortStats returns port i's counters with paused time accumulated through Now.
func (c *nodeCore) PortStats(i int) [NumTC]TCStats {
	pt := c.ports[i]
	s := pt.stats
	now := c.net.eng.Now()
	for tc := 0; tc < NumTC; tc++ {
		q, r := &pt.tc[tc], &pt.rx[tc]
		s[tc].TxPackets, s[tc].TxBytes, s[tc].WatermarkBytes = q.txPackets, q.txBytes, q.watermark
		s[tc].RxPackets, s[tc].RxBytes = r.packets, r.bytes
		if pt.paused&(1<<tc) != 0 {
			s[tc].PausedPs += now - pt.pausedSince[tc]
		}
	}
	return s
}

// InFlight counts data packets on the node's outgoing links.
func (c *nodeCore) InFlight() int {
	n := 0
	for _, pt := range c.ports {
		n += int(pt.flight.n - pt.flightPFC)
	}
	return n
}

// handleCommon dispatches the events every node kind shares.
func (c *nodeCore) handleCommon(now units.Time, kind int32, arg int64) {
	n := c.net
	switch kind {
	case evTxDone:
		n.startTx(now, c.ports[arg])
	case evArrive:
		pt := c.ports[arg]
		in := pt.peer
		fl := &in.flight
		if pt.cutIn {
			fl = &pt.rxFlight // a cut link: the frames the barrier delivered
		}
		// A link that went down dropped its frames and left their arrival event
		// behind: only the event of its head frame (its time and key) handles it.
		if n.failed && (fl.n == 0 || n.arena.get(fl.head).at != now ||
			n.arena.get(fl.head).arrOrd != n.eng.curOrd) {
			return
		}
		id, p := fl.pop(&n.arena)
		if fl.n > 0 {
			// The next frame's arrival, in the place its sender reserved (startTx).
			h := n.arena.get(fl.head)
			n.eng.scheduleReserved(h.at, h.arrOrd, c.h, evArrive, arg)
		}
		if p.Class == classPFC {
			if !pt.cutIn {
				in.flightPFC--
			}
			n.rxPFC(now, pt, p)
			n.free(id)
			return
		}
		// Classification on arrival: the packet takes this node's class for its DSCP
		// (docs/model.md#classification) before anything here counts or queues it.
		p.TC = c.classes[p.DSCP&(config.NumDSCP-1)]
		r := &pt.rx[p.TC]
		r.packets++
		r.bytes += int64(p.Frame)
		c.self.receive(now, pt.idx, id, p)
	case evExpire:
		n.expire(now, c.ports[int32(arg)], int(arg>>32))
	}
}

func (n *Network) drop(now units.Time, c *nodeCore, pt *port, id PacketID, p *Packet, r DropReason) {
	pt.stats[p.TC].Drops[r]++
	if p.Class.Control() {
		n.ctl[p.Class].Dropped[r]++
	} else {
		n.dropped[r]++
	}
	if n.obs.Drops != nil {
		n.obs.Drops.Drop(DropEvent{Time: now, Node: c.id, Port: pt.idx, TC: p.TC, Reason: r, Packet: p})
	}
	n.free(id)
}
