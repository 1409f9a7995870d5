package replay

import (
	"fmt"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
	"github.com/tracefabric/tracefabric/switchmodel/transport"
)

// build instantiates the Clos: hosts first, then switches, so network node ids equal
// Clos node indices and host indices equal host ids.
func (s *sim) build() error {
	c := s.pr.Clos
	nodes := make([]switchmodel.Node, len(c.Nodes))
	for i, n := range c.Nodes {
		switch n.Tier {
		case config.TierHost:
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
			sw, err := s.net.AddSwitch(n.Name, n.Tier, &s.cfg.Switch, b)
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
				if c.Nodes[n.Ports[hops[0]].Peer].Tier > n.Tier {
					sw.RecordMembers(set) // an uplink set: flows.arrow records its member, even of one port
				}
				sets[key] = set
			}
			if err := sw.SetRoute(dst, set); err != nil {
				return fmt.Errorf("%s: %w", n.Name, err)
			}
		}
	}
	if s.pr.closedLoop() {
		l, err := transport.New(s.net, s.cfg.Transport)
		if err != nil {
			return err
		}
		s.layer = l
		l.SetObserver(s)
	}
	warns, err := s.net.Start()
	if err != nil {
		return inputErrf("%w", err)
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
