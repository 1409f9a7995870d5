package replay

import (
	"fmt"
	"net/netip"

	"github.com/tracefabric/tracefabric/fabric"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// PathHop is one forwarding step of a flow's path (`replay path`): the node that
// puts the packet on a link, the size of the set of ports it chooses from, the hash
// it computes when that set has two or more members ("" otherwise), the chosen
// member's index in the set and port, and the next node.
type PathHop struct {
	Node    string `json:"node"`
	SetSize int    `json:"set_size"`
	Hash    string `json:"hash"`
	Member  int    `json:"member"`
	Port    int    `json:"port"`
	Next    string `json:"next"`
	// Weights are a WCMP set's member weights, in member order (omitted for an
	// equal-weight set): the member is the group table's slot hash mod table size.
	Weights []int32 `json:"weights,omitempty"`
	// Ports are the set's ports in member order.
	Ports []int32 `json:"ports,omitempty"`
}

// FlowPath returns the hops a flow takes from its source host to its destination
// host with cfg's hash method and salts (the show load-balance of a real switch).
// Under LoadBalancingMethod flowlet the hops are the hash choices, which is where a
// flowlet starts looking among equally loaded members; the simulated path can differ.
//
// src and dst are both IPv4 or both IPv6 (an IPv4-mapped IPv6 address is IPv6); the
// key is the family's (docs/model.md#ecmp-hashing).
func (c *Topology) FlowPath(cfg *config.Config, hm *HostMap, src, dst netip.Addr, proto uint8, sport, dport uint16) ([]PathHop, error) {
	sa, da := ipaddr.FromNetip(src), ipaddr.FromNetip(dst)
	if !sa.IsValid() || sa.Family() != da.Family() {
		return nil, inputErrf("%s -> %s: the two addresses must be of one family (both IPv4 or both IPv6)", src, dst)
	}
	s, ok := hm.Host(sa)
	if !ok {
		return nil, inputErrf("%s is not an endpoint of the host mapping", src)
	}
	d, ok := hm.Host(da)
	if !ok {
		return nil, inputErrf("%s is not an endpoint of the host mapping", dst)
	}
	if s == d {
		return nil, inputErrf("%s and %s map to the same host %s (intra-host traffic is not simulated)", src, dst, c.Nodes[s].Name)
	}
	key := flowKey(sa, da, proto, sport, dport, false)
	var hops []PathHop
	node := s
	for node != d {
		var set NextHopsView
		if node < int32(c.Hosts) {
			set = NextHopsView{Ports: []int32{0}}
		} else {
			h, ok := c.Routes.NextHops(node, d)
			if !ok {
				return nil, fmt.Errorf("replay: no route from %s to %s", c.Nodes[node].Name, c.Nodes[d].Name)
			}
			set = NextHopsView(h)
		}
		if len(hops) > maxPathLinks {
			return nil, fmt.Errorf("replay: no route from %s to %s within %d links", c.Nodes[s].Name, c.Nodes[d].Name, maxPathLinks)
		}
		h := PathHop{Node: c.Nodes[node].Name, SetSize: len(set.Ports)}
		if len(set.Ports) > 1 {
			sw, _, err := cfg.SwitchFor(c.Nodes[node].Profile, c.Nodes[node].Role)
			if err != nil {
				return nil, inputErrf("%v", err)
			}
			ec := cfg.ECMPFor(sw, h.Node)
			v := ec.Method.Hash(ec.Salt, &key)
			h.Hash = fmt.Sprintf("0x%08x", v)
			h.Ports = set.Ports
			if tab := (&fabric.NextHops{Ports: set.Ports, Weights: set.Weights}).Table(); tab != nil {
				h.Member = int(tab[v%uint32(len(tab))])
				h.Weights = set.Weights
			} else {
				h.Member = int(v % uint32(len(set.Ports)))
			}
		}
		h.Port = int(set.Ports[h.Member])
		node = c.Nodes[node].Ports[h.Port].Peer
		h.Next = c.Nodes[node].Name
		hops = append(hops, h)
	}
	return hops, nil
}

// NextHopsView is a fabric.NextHops as FlowPath reads it.
type NextHopsView fabric.NextHops
