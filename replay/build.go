package replay

import (
	"fmt"

	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
	"github.com/tracefabric/tracefabric/switchmodel/transport"
)

// build instantiates the fabric: hosts first, then switches, so network node ids
// equal fabric node indices and host indices equal host ids; links in link id order
// (the fabric's port numbering); each switch with its profile's attributes and one
// set per distinct next-hop set, created in the order of the first destination host
// that uses it (set indices are recorded in loadbalance.arrow).
func (s *sim) build() error {
	t := s.pr.Topo
	sws, _, err := t.SwitchConfigs(s.cfg)
	if err != nil {
		return inputErrf("%w", err)
	}
	nodes := make([]switchmodel.Node, len(t.Nodes))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.IsHost() {
			h, err := s.net.AddHost(n.Name)
			if err != nil {
				return err
			}
			nodes[i] = h
		} else {
			b, err := ecmp.NewBalancer(s.cfg.ECMPFor(sws[i], n.Name))
			if err != nil {
				return fmt.Errorf("%s: %w", n.Name, err)
			}
			sw, err := s.net.AddSwitch(n.Name, n.Tier, sws[i], b)
			if err != nil {
				return err
			}
			nodes[i] = sw
			if s.stages != nil {
				for len(s.switchAt) <= i {
					s.switchAt = append(s.switchAt, nil)
				}
				s.switchAt[i] = sw
			}
		}
		if nodes[i].ID() != int32(i) {
			return fmt.Errorf("replay: node %s got id %d, want %d", n.Name, nodes[i].ID(), i)
		}
	}
	for id := range t.Links {
		l := &t.Links[id]
		pa, pb, err := s.net.Connect(nodes[l.A.Node], nodes[l.B.Node], switchmodel.LinkSpec{Speed: l.Speed, PropagationDelay: l.Delay})
		if err != nil {
			return err
		}
		if int32(pa) != l.A.Port || int32(pb) != l.B.Port {
			return fmt.Errorf("replay: link %d %s:%d-%s:%d numbered %d-%d", id, t.Nodes[l.A.Node].Name, l.A.Port, t.Nodes[l.B.Node].Name, l.B.Port, pa, pb)
		}
	}
	hosts := int32(t.Hosts)
	var ports, weights []int
	for i := t.Hosts; i < len(t.Nodes); i++ {
		sw := nodes[i].(*switchmodel.Switch)
		node := int32(i)
		// Switch set index of each routing set (-1: not yet made) and of each host
		// port's single-port set.
		bySet := make([]int, len(t.Routes.Sets[i-t.Hosts]))
		for k := range bySet {
			bySet[k] = -1
		}
		hostSet := map[int32]int{}
		for dst := int32(0); dst < hosts; dst++ {
			r := t.HostRack(dst)
			var set int
			if t.Racks[r].Node == node {
				hp := t.HostPort(dst)
				var ok bool
				if set, ok = hostSet[hp]; !ok {
					if set, err = sw.AddEqualCostSet([]int{int(hp)}); err != nil {
						return fmt.Errorf("%s: %w", t.Nodes[i].Name, err)
					}
					hostSet[hp] = set
				}
			} else {
				rs := t.Routes.ByRack[i-t.Hosts][r]
				if rs < 0 {
					return fmt.Errorf("replay: %s cannot reach %s", t.Nodes[i].Name, t.Nodes[dst].Name)
				}
				if set = bySet[rs]; set < 0 {
					h := &t.Routes.Sets[i-t.Hosts][rs]
					ports, weights = ports[:0], weights[:0]
					for k, p := range h.Ports {
						ports = append(ports, int(p))
						w := 1
						if h.Weights != nil {
							w = int(h.Weights[k])
						}
						weights = append(weights, w)
					}
					if set, err = sw.AddWeightedSet(ports, weights); err != nil {
						return fmt.Errorf("%s: %w", t.Nodes[i].Name, err)
					}
					if t.Up(node, ports[0]) {
						sw.RecordMembers(set) // an uplink set: flows.arrow records its member, even of one port
					}
					bySet[rs] = set
				}
			}
			if err := sw.SetRoute(dst, set); err != nil {
				return fmt.Errorf("%s: %w", t.Nodes[i].Name, err)
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
		l.SetWatcher(s)
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
