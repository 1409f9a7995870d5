package switchmodel

import "github.com/tracefabric/tracefabric/internal/units"

// Host is a server's NIC (docs/model.md#replay): one port, per-class FIFO queues without a bound,
// strict priority TC7..TC0, honouring PFC received from its rack switch; it never sends
// PFC. Control packets injected with InjectControl have FIFOs of their own, served
// before every class's data (docs/model.md#nic-control-packets). Packets for it are
// delivered when their last bit arrives.
type Host struct {
	nodeCore
	index int32
}

// AddHost creates a host; its Index (0, 1, ... in creation order) is the destination
// id used by Packet.Src/Dst and Switch.SetRoute.
func (n *Network) AddHost(name string) (*Host, error) {
	if n.started {
		return nil, ErrStarted
	}
	if err := n.checkNodes(name); err != nil {
		return nil, err
	}
	h := &Host{index: int32(len(n.hosts))}
	h.classes = &n.hostClasses
	n.addNode(h, name)
	n.hosts = append(n.hosts, h)
	return h, nil
}

// Index is the host's destination index.
func (h *Host) Index() int32 { return h.index }

// Backlog returns the NIC's queued packets and frame bytes of class tc (control
// packets queued ahead of the data included).
func (h *Host) Backlog(tc int) (packets int, bytes int64) {
	if len(h.ports) == 0 {
		return 0, 0
	}
	q, c := &h.ports[0].tc[tc].q, &h.ports[0].ctl[tc]
	return int(q.n + c.n), q.bytes + c.bytes
}

// Buffered counts the packets waiting in the NIC.
func (h *Host) Buffered() int {
	n := 0
	for _, pt := range h.ports {
		for tc := range pt.tc {
			n += int(pt.tc[tc].q.n + pt.ctl[tc].n)
		}
	}
	return n
}

// Handle dispatches the host's events.
func (h *Host) Handle(now units.Time, kind int32, arg int64) { h.handleCommon(now, kind, arg) }

func (h *Host) receive(now units.Time, pi int32, id PacketID, p *Packet) {
	n := h.net
	if p.Dst != h.index {
		n.drop(now, &h.nodeCore, h.ports[pi], id, p, DropNoRoute)
		return
	}
	if p.Class == OpenData {
		n.delivered++
		if n.obs.Deliveries != nil {
			n.obs.Deliveries.Delivered(now, p)
		}
	} else {
		if p.Class.Control() {
			n.ctl[p.Class].Delivered++
		} else {
			n.delivered++
			if n.obs.Deliveries != nil {
				n.obs.Deliveries.Delivered(now, p)
			}
		}
		if n.agent != nil {
			n.agent.Received(now, h, p)
		}
	}
	n.free(id)
}

func (h *Host) depart(now units.Time, pt *port, id PacketID, p *Packet) {
	if o := h.net.obs.NIC; o != nil {
		o.NICDequeue(NICEvent{Time: now, Host: h.id, TC: p.TC, Delay: now - p.at, Backlog: pt.tc[p.TC].q.bytes + pt.ctl[p.TC].bytes, Packet: p})
	}
	if p.Class == ClosedData && h.net.agent != nil {
		h.net.agent.Departed(now, h, p)
	}
}
