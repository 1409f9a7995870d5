package replay

import (
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// A flow's member at each tier comes from the first packet that passed that tier's
// set: a first packet dropped at the rack (it chose a rack member but never reached
// the fabric) leaves the fabric member to the next packet.
func TestMembersFromFirstPacketThatPassed(t *testing.T) {
	s := &sim{}
	f := &flowState{rackMember: -1, fabricMember: -1, lastRack: -1, lastFabric: -1}
	dropped := &switchmodel.Packet{RackMember: 2, FabricMember: -1} // dropped at the rack's egress
	delivered := &switchmodel.Packet{RackMember: 2, FabricMember: 3}
	s.members(f, dropped)
	s.members(f, delivered)
	if f.rackMember != 2 || f.fabricMember != 3 {
		t.Errorf("members rack %d fabric %d, want 2 and 3 (the fabric member of the first packet that reached the fabric)", f.rackMember, f.fabricMember)
	}
	if f.pathChanges != 0 {
		t.Errorf("%d path changes, want 0 (both packets took rack member 2)", f.pathChanges)
	}
	// A packet dropped at the source NIC or the rack's ingress crossed no set.
	g := &flowState{rackMember: -1, fabricMember: -1, lastRack: -1, lastFabric: -1}
	s.members(g, &switchmodel.Packet{RackMember: -1, FabricMember: -1})
	s.members(g, &switchmodel.Packet{RackMember: 1, FabricMember: 0})
	if g.rackMember != 1 || g.fabricMember != 0 {
		t.Errorf("after a packet that crossed nothing: members rack %d fabric %d, want 1 and 0", g.rackMember, g.fabricMember)
	}
}

// With one fabric switch per pod a rack has a single uplink: flows that leave their
// rack cross it as member 0 (recorded although the "set" has one port), flows that
// stay in their rack record -1. Fabric members stay those of the 4-spine set.
func TestSingleUplinkMember(t *testing.T) {
	cfg := config.Default()
	cfg.Topology.FabricPerPod = 1
	_, out := runTrace(t, "testdata/pcaps/demo.pcap", func(o *Options) { o.Config = &cfg })
	ports, nodes, err := records.ReadAll(records.OpenPorts(filepath.Join(out, records.PortsFile)))
	if err != nil {
		t.Fatal(err)
	}
	rackOf := map[int32]int32{} // host -> its rack (the peer of its NIC)
	for _, p := range ports {
		if p.Tier == records.TierHost {
			rackOf[p.Node] = p.Peer
		}
	}
	flows, fnodes, err := records.ReadAll(records.OpenFlows(filepath.Join(out, records.FlowsFile)))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != len(fnodes) {
		t.Fatalf("node dictionaries of %d and %d names", len(nodes), len(fnodes))
	}
	inter, intra := 0, 0
	for _, f := range flows {
		if f.Delivered == 0 {
			continue
		}
		switch sameRack := rackOf[f.SrcHost] == rackOf[f.DstHost]; {
		case sameRack && f.RackMember != -1:
			t.Fatalf("flow %d stays in rack %s but records rack member %d", f.FlowID, nodes[rackOf[f.SrcHost]], f.RackMember)
		case !sameRack && f.RackMember != 0:
			t.Fatalf("flow %d leaves rack %s through its single uplink but records rack member %d, want 0", f.FlowID, nodes[rackOf[f.SrcHost]], f.RackMember)
		case sameRack:
			intra++
		default:
			inter++
			if f.FabricMember < -1 || f.FabricMember >= 4 {
				t.Fatalf("flow %d: fabric member %d of a 4-spine set", f.FlowID, f.FabricMember)
			}
		}
	}
	if inter == 0 || intra == 0 {
		t.Fatalf("%d inter-rack and %d intra-rack flows: the demo has both", inter, intra)
	}
}
