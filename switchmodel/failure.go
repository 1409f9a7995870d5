package switchmodel

import (
	"fmt"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Failures and operations over time (docs/model.md#failures-and-operations): links
// taken down and up, link speeds changed, switches' sets losing and regaining
// members. Each call acts at Engine.Now on the nodes it names alone (a link on its
// two ends, a set on its switch), so that callers schedule them as events of those
// nodes.

// portOf returns node's port i, or an error naming them.
func (n *Network) portOf(node Node, port int) (*port, error) {
	nd, ok := node.(nodeImpl)
	if !ok || nd.core().net != n {
		return nil, fmt.Errorf("switchmodel: node %s is not in this network", node.Name())
	}
	c := nd.core()
	if port < 0 || port >= len(c.ports) {
		return nil, fmt.Errorf("switchmodel: node %s has no port %d", c.name, port)
	}
	return c.ports[port], nil
}

// SetLinkDown takes the link of node's port down (down true) or brings it back up,
// at both ends, now. A link going down drops, with reason link-down, the data frames
// on the wire in both directions and every packet queued at either end for it (a
// switch releases their buffer, which may resume the upstream of their ingress port);
// PFC frames on the wire or queued are lost; each end's received pauses expire at once
// (pfc.arrow expire: a dead peer can neither refresh nor resume them) and each end
// stops pausing its peer (no resume is sent). While down, neither end sends anything:
// a packet routed to the port is dropped link-down (Switch admission; a host's
// injection). Bringing it up restores transmission with no pause in either direction.
// Routing is the caller's (Switch.SetLive, SetRoute).
func (n *Network) SetLinkDown(node Node, i int, down bool) error {
	pt, err := n.portOf(node, i)
	if err != nil {
		return err
	}
	if pt.down == down {
		return nil
	}
	now := n.eng.Now()
	for _, e := range [...]*port{pt, pt.peer} {
		n.setPortDown(now, e, down)
	}
	if !down {
		n.kick(now, pt)
		n.kick(now, pt.peer)
	}
	return nil
}

// LinkDown reports whether the link of node's port is down.
func (n *Network) LinkDown(node Node, i int) bool {
	pt, err := n.portOf(node, i)
	return err == nil && pt.down
}

func (n *Network) setPortDown(now units.Time, pt *port, down bool) {
	pt.down = down
	n.failed = n.failed || down
	c := pt.core
	d := int32(1)
	if !down {
		d = -1
	}
	switch nd := c.self.(type) {
	case *Switch:
		nd.downPorts += d
		nd.guarded = nd.downPorts > 0 || nd.wd != nil
	case *Host:
		nd.linkDown = down
	}
	if !down {
		return
	}
	for pt.flight.n > 0 {
		id, p := pt.flight.pop(&n.arena)
		if p.Class == classPFC {
			pt.flightPFC--
			n.free(id)
			continue
		}
		n.drop(now, c, pt, id, p, DropLinkDown)
	}
	for pt.pfcq.n > 0 {
		id, _ := pt.pfcq.pop(&n.arena)
		n.free(id)
	}
	for tc := NumTC - 1; tc >= 0; tc-- {
		n.discard(now, pt, tc, DropLinkDown)
	}
	for tc := range NumTC {
		pt.pauseEvAt[tc] = -1
		if pt.paused&(1<<tc) != 0 {
			n.unpause(now, pt, tc)
			n.pfcEvent(now, pt, uint8(tc), PFCExpire, 0)
		}
	}
	for P := range pt.pausing {
		if pt.pausing[P] {
			pt.pausing[P] = false
			pt.refreshGen[P]++
		}
	}
}

// discard drops every packet of port pt's class queue tc with reason r, releasing a
// switch's buffer for each.
func (n *Network) discard(now units.Time, pt *port, tc int, r DropReason) {
	q := &pt.tc[tc].q
	sw, _ := pt.core.self.(*Switch)
	for q.n > 0 {
		id, p := q.pop(&n.arena)
		if sw != nil {
			sw.release(now, pt, p)
		}
		n.drop(now, pt.core, pt, id, p, r)
	}
	pt.busyTC &^= 1 << tc
}

// SetLinkSpeed makes the link of node's port run at speed in both directions from
// now: the frame on the wire finishes at the old speed; pause times follow the new
// speed. Headroom stays as laid out at Start (docs/model.md#failures-and-operations).
func (n *Network) SetLinkSpeed(node Node, i int, speed units.BitRate) error {
	pt, err := n.portOf(node, i)
	if err != nil {
		return err
	}
	if speed <= 0 {
		return fmt.Errorf("switchmodel: link %s port %d: speed %d must be > 0", node.Name(), i, speed)
	}
	for _, e := range [...]*port{pt, pt.peer} {
		e.speed = speed
		e.psPerByte = 0
		if (8*int64(units.Second))%int64(speed) == 0 {
			e.psPerByte = units.Time(8 * int64(units.Second) / int64(speed))
		}
		e.pauseDur = units.SerializationTime(PFCQuanta*64, speed)
		e.halfPause = e.pauseDur / 2
	}
	return nil
}

// Flush drops, with reason link-down, the packets waiting in the switch's forwarding
// lines (a switch going down: its links are taken down by SetLinkDown, which empties
// its queues).
func (s *Switch) Flush() {
	now := s.net.eng.Now()
	s.net.failed = true
	for _, pt := range s.ports {
		for pt.fwd.n > 0 {
			id, p := pt.fwd.pop(&s.net.arena)
			s.net.drop(now, &s.nodeCore, pt, id, p, DropLinkDown)
		}
	}
}

// SetLive makes live (by member, in the set's member order) the members of set that
// the switch may use (docs/model.md#failures-and-operations): local repair and
// reconvergence. A set of two or more ports tells its Selector, which rehashes
// (docs/model.md#rehashing) and returns the flows it moved; change numbers the
// change for the Selector's counts. A set left with no live member routes nothing:
// its destinations' packets are dropped no-route until a member is live again.
func (s *Switch) SetLive(set int, live []bool, change int) (moved int64, err error) {
	if set < 0 || set >= len(s.sets) {
		return 0, fmt.Errorf("switchmodel: switch %s: SetLive(%d): no such set", s.name, set)
	}
	members := len(s.sets[set])
	if s.members[set] != nil {
		members = len(s.members[set])
	}
	if len(live) != members {
		return 0, fmt.Errorf("switchmodel: switch %s: SetLive(%d): %d values for %d members", s.name, set, len(live), members)
	}
	any, all := false, true
	for _, l := range live {
		any = any || l
		all = all && l
	}
	prev := s.live[set]
	if all {
		s.live[set] = nil
	} else {
		s.live[set] = append(s.live[set][:0:0], live...)
	}
	if id := s.selSet[set]; id >= 0 {
		slots := live
		if sm := s.slotMember[set]; sm != nil {
			slots = make([]bool, len(sm))
			for i, m := range sm {
				slots[i] = live[m]
			}
		}
		if !(all && prev == nil) {
			moved = s.sel.SetLive(id, slots, change)
		}
	}
	if dead := !any; dead != s.dead[set] {
		s.dead[set] = dead
		for dst, b := range s.base {
			if b == int32(set) {
				s.routes[dst] = int32(set)
				if dead {
					s.routes[dst] = -1
				}
			}
		}
	}
	return moved, nil
}

// Live returns the live members of set (SetLive); nil when all are.
func (s *Switch) Live(set int) []bool {
	return append([]bool(nil), s.live[set]...)
}
