package config

import (
	"fmt"
	"math"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Tier is a node's place in the Clos (docs/model.md#clos-builder): the one name of
// the concept on the model's side (the configuration, the Clos builder and the switch
// model); records.Tier is the records schema's, and package replay maps one onto the
// other. TierNone is for switches outside a Clos (tests of the model).
type Tier uint8

// Tiers.
const (
	TierNone   Tier = iota // a switch outside a Clos
	TierHost               // a server's NIC
	TierRack               // top-of-rack switch: hosts below, fabric switches above
	TierFabric             // pod aggregation: racks below, spines of its plane above
	TierSpine              // joins the pods: one fabric switch of each pod below
	// NumTiers is the number of tiers.
	NumTiers = iota
)

var tierNames = [NumTiers]string{"none", "host", "rack", "fabric", "spine"}

// String returns "none", "host", "rack", "fabric" or "spine".
func (t Tier) String() string {
	if t < NumTiers {
		return tierNames[t]
	}
	return fmt.Sprintf("Tier(%d)", uint8(t))
}

// SwitchTiers are the switch tiers of a Clos, lowest first.
var SwitchTiers = [...]Tier{TierRack, TierFabric, TierSpine}

// PortSpec is what buffer sizing needs to know of a port: its link.
type PortSpec = Link

// Tiers returns the switch tiers present in the topology: rack and fabric, and spine
// when Pods > 1.
func (c *Config) Tiers() []Tier {
	if c.Topology.Pods > 1 {
		return SwitchTiers[:]
	}
	return SwitchTiers[:2]
}

// Ports returns the links of a switch of the given tier, down-links first:
// rack: HostsPerRack host links then FabricPerPod rack-fabric links;
// fabric: RacksPerPod rack-fabric links then, when Pods > 1, SpinesPerPlane
// fabric-spine links; spine: Pods fabric-spine links (none when Pods == 1).
func (c *Config) Ports(tier Tier) []PortSpec {
	t := &c.Topology
	var ports []PortSpec
	add := func(n int, l Link) {
		for i := 0; i < n; i++ {
			ports = append(ports, l)
		}
	}
	switch tier {
	case TierRack:
		add(t.HostsPerRack, t.HostLink)
		add(t.FabricPerPod, t.RackFabricLink)
	case TierFabric:
		add(t.RacksPerPod, t.RackFabricLink)
		if t.Pods > 1 {
			add(t.SpinesPerPlane, t.FabricSpineLink)
		}
	case TierSpine:
		if t.Pods > 1 {
			add(t.Pods, t.FabricSpineLink)
		}
	}
	return ports
}

// BufferLayout is how a switch's buffer divides at start (docs/model.md#shared-buffer): per-port
// headroom for each lossless pool outside the pools, and the pools' sizes in bytes.
type BufferLayout struct {
	// Cells is the number of whole cells in the buffer: BufferSize / CellSize.
	Cells int64
	// Headroom[p] is port p's headroom in each lossless pool, in bytes (auto or fixed).
	Headroom []units.Bytes
	// LosslessPools is the number of lossless pools (each port has Headroom[p] in each).
	LosslessPools int
	// TotalHeadroom is the sum over ports of Headroom[p] * LosslessPools.
	TotalHeadroom units.Bytes
	// PoolSizes[i] is pool i's size in bytes: a share of BufferSize - TotalHeadroom or
	// the configured bytes, rounded down to whole cells.
	PoolSizes []units.Bytes
	// Warnings lists fixed headroom below the docs/model.md#headroom-sizing formula, one per distinct case.
	Warnings []string
}

// Layout divides the buffer of a switch with the given ports. It returns an error
// (wrapping ErrInvalid) when the pools and the headroom over-commit the buffer.
func (s *Switch) Layout(ports []PortSpec) (BufferLayout, error) {
	var l BufferLayout
	if s.CellSize > 0 {
		l.Cells = int64(s.BufferSize / s.CellSize)
	}
	for i := range s.Pools {
		if s.Lossless(i) {
			l.LosslessPools++
		}
	}
	seen := map[string]bool{}
	l.Headroom = make([]units.Bytes, len(ports))
	for p, port := range ports {
		if l.LosslessPools == 0 {
			continue
		}
		h, warn := s.HeadroomFor(port.Speed, port.PropagationDelay)
		if warn != "" && !seen[warn] {
			seen[warn] = true
			l.Warnings = append(l.Warnings, warn)
		}
		l.Headroom[p] = h
		l.TotalHeadroom += h * units.Bytes(l.LosslessPools)
	}
	left := s.BufferSize - l.TotalHeadroom
	var sum units.Bytes
	var shares float64
	l.PoolSizes = make([]units.Bytes, len(s.Pools))
	for i, p := range s.Pools {
		l.PoolSizes[i] = p.Size.Resolve(max(left, 0), s.CellSize)
		sum += l.PoolSizes[i]
		shares += float64(p.Size.Share)
	}
	if left < 0 || sum > left || shares > 1+1e-12 {
		var rule string
		if left < 0 {
			rule = fmt.Sprintf("over-committed buffer: the headroom alone, %d B (%d ports x %d lossless pools), exceeds BufferSize %v (%d B); the pools and all headroom must fit in the buffer",
				int64(l.TotalHeadroom), len(ports), l.LosslessPools, s.BufferSize, int64(s.BufferSize))
		} else {
			rule = fmt.Sprintf("over-committed buffer: pools %d B + headroom %d B (%d ports x %d lossless pools) > BufferSize %v (%d B); the pools and all headroom must fit in the buffer",
				int64(sum), int64(l.TotalHeadroom), len(ports), l.LosslessPools, s.BufferSize, int64(s.BufferSize))
		}
		return l, &Error{Violations: []Violation{{
			Attr:    "Switch.BufferSize",
			Rule:    rule,
			related: []string{"Switch.Headroom", "Switch.Pools", "Topology"},
		}}}
	}
	return l, nil
}

// MinBufferSize is the smallest BufferSize with which Layout(ports) succeeds and
// every pool that has traffic classes gets at least one cell: the ports' total
// headroom (which does not depend on BufferSize) plus the least buffer left over
// that holds the pools by the layout rule (docs/model.md#shared-buffer). ok is
// false when no size does (a pool in bytes smaller than a cell, or pools in bytes
// beside shares of 100%).
func (s *Switch) MinBufferSize(ports []PortSpec) (min units.Bytes, ok bool) {
	cell := s.CellSize
	if cell <= 0 {
		return 0, false
	}
	l, _ := s.Layout(ports)
	var inBytes units.Bytes
	var shares float64
	var lo units.Bytes // a lower bound of the buffer left after headroom
	for _, p := range s.Pools {
		if p.Size.Share == 0 {
			b := p.Size.Resolve(0, cell)
			if len(p.TrafficClasses) > 0 && b < cell {
				return 0, false
			}
			inBytes += b
			continue
		}
		shares += float64(p.Size.Share)
		if len(p.TrafficClasses) > 0 && p.Size.Share > 0 {
			// floor(share x left) >= cell needs left >= cell / share.
			lo = max(lo, units.Bytes(float64(cell)/float64(p.Size.Share))-1)
		}
	}
	lo = max(lo, inBytes)
	fits := func(left units.Bytes) bool {
		var sum units.Bytes
		for _, p := range s.Pools {
			r := p.Size.Resolve(left, cell)
			if len(p.TrafficClasses) > 0 && r < cell {
				return false
			}
			sum += r
		}
		return sum <= left
	}
	k := units.Bytes(len(s.Pools))
	hi := lo + 4*(k+1)*cell // pools in bytes beside 100% of shares: only the rounding may leave room
	if shares < 1-1e-12 {
		// Each share pool rounds down by at most a cell and a byte: fitting needs
		// left >= inBytes + shares x left - k (cell + 1), and left >= inBytes / (1 -
		// shares) always fits the sum.
		lo = max(lo, units.Bytes(float64(inBytes-k*(cell+1))/(1-shares)))
		hi = max(hi, units.Bytes(float64(inBytes)/(1-shares))+2, lo+2)
	}
	for left := max(lo, 0); left <= hi; left++ {
		if fits(left) {
			return max(l.TotalHeadroom+left, cell), true
		}
	}
	return 0, false
}

// MinBufferSize is the smallest BufferSize that fits every switch tier of the
// topology (Switch.MinBufferSize of each, with the tier's attributes: TierSwitch);
// ok is false when some tier fits none.
func (c *Config) MinBufferSize() (units.Bytes, bool) {
	var need units.Bytes
	for _, tier := range c.Tiers() {
		m, ok := c.TierSwitch(tier).MinBufferSize(c.Ports(tier))
		if !ok {
			return 0, false
		}
		need = max(need, m)
	}
	return need, true
}

// Layout divides the buffer of a Clos switch of the given tier (ports from
// Ports(tier)) with the tier's attributes (TierSwitch). The error names the tier
// and the profile.
func (c *Config) Layout(tier Tier) (BufferLayout, error) {
	s, profile, _ := c.SwitchFor("", tier.String())
	l, err := s.Layout(c.Ports(tier))
	if e, ok := err.(*Error); ok {
		for i := range e.Violations {
			e.Violations[i].Rule += fmt.Sprintf(" (on %s switches)", tier)
		}
		if profile != "" {
			e.inProfile(profile)
		}
	}
	return l, err
}

// TierSwitch returns the attributes of the Clos's switches of tier: the profile
// named after the tier (rack, fabric, spine) if there is one, else Switch.
func (c *Config) TierSwitch(tier Tier) *Switch {
	s, _, _ := c.SwitchFor("", tier.String())
	return s
}

// CapacityReport compares a switch's bandwidth with its SwitchingCapacity (docs/model.md#switching-capacity).
type CapacityReport struct {
	Tier Tier
	// Ports is the number of ports.
	Ports int
	// Bandwidth is the sum of the port speeds, each full-duplex port counted once.
	Bandwidth units.BitRate
	// SwitchingCapacity is the configured capacity, or Bandwidth when it is 0.
	SwitchingCapacity units.BitRate
	// Oversubscribed is true when SwitchingCapacity < Bandwidth. It never limits
	// forwarding; it is reported.
	Oversubscribed bool
}

// Capacity reports the bandwidth of a switch of the given tier against
// SwitchingCapacity.
func (c *Config) Capacity(tier Tier) CapacityReport {
	ports := c.Ports(tier)
	r := CapacityReport{Tier: tier, Ports: len(ports), Bandwidth: SumSpeeds(ports)}
	r.SwitchingCapacity = c.Switch.SwitchingCapacity
	if r.SwitchingCapacity == 0 {
		r.SwitchingCapacity = r.Bandwidth
	}
	r.Oversubscribed = r.SwitchingCapacity < r.Bandwidth
	return r
}

// SumSpeeds returns the bandwidth of a switch with these ports: the sum of their
// speeds, each full-duplex port once.
func SumSpeeds(ports []PortSpec) units.BitRate {
	var sum units.BitRate
	for _, p := range ports {
		sum += p.Speed
	}
	return sum
}

// LongestPath returns the links of the longest host-to-host path (docs/model.md#fabric-bdp), in order
// from the sending host: 6 links host-rack-fabric-spine-fabric-rack-host when
// Pods > 1; 4 (host-rack-fabric-rack-host) when Pods == 1 and RacksPerPod > 1;
// 2 (host-rack-host) for a single rack.
func (c *Config) LongestPath() []Link {
	t := &c.Topology
	switch {
	case t.Pods > 1:
		return []Link{t.HostLink, t.RackFabricLink, t.FabricSpineLink, t.FabricSpineLink, t.RackFabricLink, t.HostLink}
	case t.RacksPerPod > 1:
		return []Link{t.HostLink, t.RackFabricLink, t.RackFabricLink, t.HostLink}
	}
	return []Link{t.HostLink, t.HostLink}
}

// BaseRTT is the round trip over the longest host-to-host path (docs/model.md#fabric-bdp): the sum
// over its links of the propagation delay both ways, the serialization of one MTU
// wire frame (Mtu+38 bytes) forward and of one 84-byte frame back.
// Default: 6 x (2 us + 723.04 ns + 6.72 ns) = 16.37856 us.
func (c *Config) BaseRTT() units.Time {
	var rtt units.Time
	for _, l := range c.LongestPath() {
		rtt += LinkRTT(l, c.Switch.Mtu)
	}
	return rtt
}

// LinkRTT is one link's share of BaseRTT: its propagation delay both ways, one MTU
// wire frame (mtu+38 bytes) forward and one 84-byte frame back (0 for a link of no
// speed, which validation rejects).
func LinkRTT(l Link, mtu units.Bytes) units.Time {
	if l.Speed <= 0 {
		return 0
	}
	return 2*l.PropagationDelay + units.SerializationTime(int64(mtu+38), l.Speed) + units.SerializationTime(int64(PfcFrameWireBytes), l.Speed)
}

// BDP is the fabric bandwidth-delay product (docs/model.md#fabric-bdp): HostLink speed * BaseRTT / 8,
// rounded down to whole bytes. Default: 204,732 B.
func (c *Config) BDP() units.Bytes {
	return units.BytesIn(c.Topology.HostLink.Speed, c.BaseRTT())
}

// EgressQueueLimitBytes returns the fixed lossy egress queue limit (EgressLimitMode
// fixed): EgressQueueLimitBdp * BDP (rounded down to whole bytes) when
// EgressQueueLimitBdp > 0, else EgressQueueLimit. It returns 0 in dynamic mode.
func (c *Config) EgressQueueLimitBytes() units.Bytes {
	s := &c.Switch
	if s.EgressLimitMode != EgressFixed {
		return 0
	}
	if s.EgressQueueLimitBdp > 0 {
		return units.Bytes(math.Floor(s.EgressQueueLimitBdp * float64(c.BDP())))
	}
	return s.EgressQueueLimit
}
