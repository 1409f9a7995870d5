package config

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// Mtu bounds: the smallest MTU every IPv4 host must accept (RFC 791) and the largest
// IPv4 total length.
const (
	MinMtu units.Bytes = 68
	MaxMtu units.Bytes = 65535
)

// Sanity bounds that keep every derived quantity far from int64 overflow.
const (
	MaxPorts      = 4096                 // ports of one switch
	MaxNodes      = 1 << 20              // hosts and switches of one topology
	MinSpeed      = units.Mbps           // link speed (catches "100" meaning 100 bit/s)
	MaxSpeed      = 100 * units.Tbps     // link speed
	MaxDelay      = units.Second         // propagation delay, forwarding latency
	MaxBufferSize = units.Bytes(1 << 40) // 1 TiB
)

// Validate checks every rule of docs/model.md#configuration-rules and returns nil or an *Error (wrapping
// ErrInvalid) listing all violations, each naming the attribute and the rule:
// over-committed buffer (pools + all headroom > BufferSize, for each switch tier);
// a pool mixing lossless and lossy classes; a TC in no pool, in two pools, or in a
// pool index >= 8; more than 8 pools; Xon or XonOffset negative; EcnMinThreshold >
// EcnMaxThreshold; a probability outside [0,1]; EcnWeight outside (0,1]; an unknown
// hash or load-balancing method; non-positive speeds, cell or buffer sizes; negative
// delays; a topology with no hosts; and the sanity rules of each attribute's
// documentation (TC numbers 0..7, Mtu 68..65535, positive alphas, ...).
func (c *Config) Validate() error {
	e := &Error{}
	c.Switch.validate(e)
	for _, name := range c.ProfileNames() {
		s := c.Switches[name]
		pe := &Error{}
		s.validate(pe)
		e.Violations = append(e.Violations, pe.inProfile(name).Violations...)
	}
	c.Topology.validate(e)
	c.Transport.validate(e)
	if layoutInputsOK(e) && c.Topology.File == "" {
		// The buffer layout needs sane sizes, pools and topology; check it last. A
		// topology file's switches are checked one by one when the fabric is built.
		c.validateLayout(e)
	}
	return e.errOrNil()
}

// validateLayout checks the buffer layout of every switch tier, each with its
// attributes (TierSwitch: the tier's profile, else Switch): one violation for all
// the tiers of one profile it over-commits, with the numbers of the first, and the
// smallest BufferSize that fits every switch of those tiers.
func (c *Config) validateLayout(e *Error) {
	type group struct {
		profile string
		s       *Switch
		tiers   []string
		ports   [][]PortSpec
		first   Violation
	}
	var groups []*group
	byProfile := map[string]*group{}
	for _, tier := range c.Tiers() {
		s, profile, _ := c.SwitchFor("", tier.String())
		ports := c.Ports(tier)
		_, err := s.Layout(ports)
		if err == nil {
			continue
		}
		g := byProfile[profile]
		if g == nil {
			g = &group{profile: profile, s: s, first: err.(*Error).Violations[0]}
			byProfile[profile] = g
			groups = append(groups, g)
		}
		g.tiers = append(g.tiers, tier.String())
		g.ports = append(g.ports, ports)
	}
	for _, g := range groups {
		where := g.tiers[0]
		if len(g.tiers) > 1 {
			where = strings.Join(g.tiers[:len(g.tiers)-1], ", ") + " and " + g.tiers[len(g.tiers)-1]
		}
		v := g.first
		v.Rule += fmt.Sprintf(" (on %s switches)", where)
		var need units.Bytes
		ok := true
		for _, ports := range g.ports {
			m, fits := g.s.MinBufferSize(ports)
			ok = ok && fits
			need = max(need, m)
		}
		if ok {
			round := (need + units.MiB - 1) / units.MiB * units.MiB
			v.Rule += fmt.Sprintf("; the smallest BufferSize that fits every switch, with at least one cell in each pool, is %d B (%v rounds it up to whole MiB)", int64(need), round)
		}
		one := &Error{Violations: []Violation{v}}
		if g.profile != "" {
			one.inProfile(g.profile)
		}
		e.Violations = append(e.Violations, one.Violations...)
	}
}

// layoutInputsOK reports whether no violation concerns what the buffer layout reads.
func layoutInputsOK(e *Error) bool {
	for _, v := range e.Violations {
		for _, p := range []string{"Switch.BufferSize", "Switch.CellSize", "Switch.Mtu", "Switch.Pools", "Switch.PfcEnabled", "Switch.Headroom", "Topology"} {
			if strings.HasPrefix(v.Attr, p) {
				return false
			}
		}
		if strings.HasPrefix(v.Attr, "Switches.") {
			return false
		}
	}
	return true
}

func checkTCs(e *Error, attr string, tcs []int) {
	seen := map[int]bool{}
	for _, tc := range tcs {
		if tc < 0 || tc >= NumTC {
			e.add(attr, "TC %d is not a traffic class (TCs are 0..7)", tc)
			continue
		}
		if seen[tc] {
			e.add(attr, "TC %d is listed twice", tc)
		}
		seen[tc] = true
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func (s *Switch) validate(e *Error) {
	if s.BufferSize <= 0 {
		e.add("Switch.BufferSize", "%v must be positive (buffer sizes are > 0)", s.BufferSize)
	} else if s.BufferSize > MaxBufferSize {
		e.add("Switch.BufferSize", "%v is above %v", s.BufferSize, MaxBufferSize)
	}
	if s.CellSize <= 0 {
		e.add("Switch.CellSize", "%v must be positive (cell sizes are > 0)", s.CellSize)
	} else if s.BufferSize > 0 && s.CellSize > s.BufferSize {
		e.add("Switch.CellSize", "%v is larger than BufferSize %v (the buffer holds whole cells)", s.CellSize, s.BufferSize)
	}
	if s.Mtu < MinMtu || s.Mtu > MaxMtu {
		e.add("Switch.Mtu", "%d B is outside %d..%d (the largest IPv4 packet a port carries: at least IPv4's minimum MTU, at most its 16-bit total length)", int64(s.Mtu), int64(MinMtu), int64(MaxMtu))
	}
	for _, d := range sortedKeys(s.DscpToTc) {
		attr := fmt.Sprintf("Switch.DscpToTc[%d]", d)
		if d < 0 || d >= NumDSCP {
			e.add(attr, "DSCP %d is not a code point (DSCP is 6 bits: 0..63)", d)
			continue
		}
		if tc := s.DscpToTc[d]; tc < 0 || tc >= NumTC {
			e.add(attr, "TC %d is not a traffic class (TCs are 0..7)", tc)
		}
	}
	s.validatePools(e)
	if !s.Headroom.Auto && s.Headroom.Size < 0 {
		e.add("Switch.Headroom", "%v must not be negative (\"auto\" or a size >= 0)", s.Headroom.Size)
	}
	if s.Xoff < 0 {
		e.add("Switch.Xoff", "%v must not be negative (0 = dynamic, XoffAlpha)", s.Xoff)
	}
	if s.Xoff == 0 && (!finite(s.XoffAlpha) || s.XoffAlpha <= 0) {
		e.add("Switch.XoffAlpha", "%v must be positive when Xoff is 0 (dynamic Xoff = XoffAlpha * free pool space)", s.XoffAlpha)
	}
	if s.Xon < 0 {
		e.add("Switch.Xon", "%v is negative (Xon must be >= 0)", s.Xon)
	}
	if s.XonOffset < 0 {
		e.add("Switch.XonOffset", "%v is negative (XonOffset must be >= 0)", s.XonOffset)
	}
	switch s.EgressLimitMode {
	case EgressDynamic:
		if !finite(s.EgressAlpha) || s.EgressAlpha <= 0 {
			e.add("Switch.EgressAlpha", "%v must be positive in dynamic mode (limit = EgressAlpha * free pool space)", s.EgressAlpha)
		}
	case EgressFixed:
		if s.EgressQueueLimitBdp <= 0 && s.EgressQueueLimit <= 0 {
			e.add("Switch.EgressQueueLimit", "EgressLimitMode fixed needs EgressQueueLimit > 0 or EgressQueueLimitBdp > 0 (a zero limit drops every lossy packet)")
		}
	default:
		e.add("Switch.EgressLimitMode", "%v is unknown (want dynamic or fixed)", s.EgressLimitMode)
	}
	if s.EgressQueueLimit < 0 {
		e.add("Switch.EgressQueueLimit", "%v must not be negative", s.EgressQueueLimit)
	}
	if !finite(s.EgressQueueLimitBdp) || s.EgressQueueLimitBdp < 0 {
		e.add("Switch.EgressQueueLimitBdp", "%v must be >= 0 (a multiple of the fabric BDP; 0 = unused)", s.EgressQueueLimitBdp)
	}
	checkTCs(e, "Switch.EcnEnabled", s.EcnEnabled)
	checkEcn(e, "Switch", s.EcnMinThreshold, s.EcnMaxThreshold, s.EcnMaxProbability)
	if !finite(s.EcnWeight) || s.EcnWeight <= 0 || s.EcnWeight > 1 {
		e.add("Switch.EcnWeight", "%v is outside (0,1] (EWMA weight: 1 = instantaneous)", s.EcnWeight)
	}
	if !s.EcnMarkAt.valid() {
		e.add("Switch.EcnMarkAt", "%v is unknown (want dequeue or enqueue)", s.EcnMarkAt)
	}
	for _, tc := range sortedKeys(s.EcnClasses) {
		attr := fmt.Sprintf("Switch.EcnClasses[%d]", tc)
		if tc < 0 || tc >= NumTC {
			e.add(attr, "TC %d is not a traffic class (TCs are 0..7)", tc)
			continue
		}
		r := s.Ecn(tc)
		o := s.EcnClasses[tc]
		if o.EcnMinThreshold != nil || o.EcnMaxThreshold != nil || o.EcnMaxProbability != nil {
			checkEcn(e, attr, r.MinThreshold, r.MaxThreshold, r.MaxProbability)
		}
	}
	if s.ForwardingLatency < 0 {
		e.add("Switch.ForwardingLatency", "%v is negative (delays must be >= 0)", s.ForwardingLatency)
	} else if s.ForwardingLatency > MaxDelay {
		e.add("Switch.ForwardingLatency", "%v is above %v", s.ForwardingLatency, MaxDelay)
	}
	if s.SwitchingCapacity < 0 {
		e.add("Switch.SwitchingCapacity", "%v is negative (speeds must be positive; 0 = the sum of port speeds)", s.SwitchingCapacity)
	}
	if !s.EcmpHashMethod.Valid() {
		e.add("Switch.EcmpHashMethod", "%v is an unknown hash method (want one of %s)", s.EcmpHashMethod, methodList())
	}
	if !s.LoadBalancingMethod.Valid() {
		e.add("Switch.LoadBalancingMethod", "%v is an unknown load-balancing method (want none or flowlet)", s.LoadBalancingMethod)
	}
	if s.Flowlet.Gap < 0 {
		e.add("Switch.Flowlet.Gap", "%v is negative (delays must be >= 0)", s.Flowlet.Gap)
	}
	if s.Flowlet.FlowTableSize < 0 || s.Flowlet.FlowTableSize > ecmp.MaxFlowTableSize {
		e.add("Switch.Flowlet.FlowTableSize", "%d is outside 0..%d (0 = exact table)", s.Flowlet.FlowTableSize, ecmp.MaxFlowTableSize)
	}
	if s.BufferStatsReportInterval < 0 {
		e.add("Switch.BufferStatsReportInterval", "%v is negative (0 = no samples)", s.BufferStatsReportInterval)
	}
}

func methodList() string {
	var names []string
	for _, m := range ecmp.Methods() {
		names = append(names, m.String())
	}
	return strings.Join(names, ", ")
}

func checkEcn(e *Error, prefix string, lo, hi units.Bytes, p float64) {
	if lo < 0 {
		e.add(prefix+".EcnMinThreshold", "%v must not be negative", lo)
	}
	if hi < 0 {
		e.add(prefix+".EcnMaxThreshold", "%v must not be negative", hi)
	}
	if lo > hi {
		e.add(prefix+".EcnMinThreshold", "EcnMinThreshold %v is above EcnMaxThreshold %v (the RED curve needs min <= max; equal = a step)", lo, hi)
	}
	if !finite(p) || p < 0 || p > 1 {
		e.add(prefix+".EcnMaxProbability", "%v is outside [0,1] (a probability)", p)
	}
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (s *Switch) validatePools(e *Error) {
	checkTCs(e, "Switch.PfcEnabled", s.PfcEnabled)
	switch {
	case len(s.Pools) == 0:
		e.add("Switch.Pools", "no pools (every TC must map to one of 1..8 pools)")
	case len(s.Pools) > MaxPools:
		e.add("Switch.Pools", "%d pools: at most %d (pool indexes 0..7)", len(s.Pools), MaxPools)
	}
	owner := map[int]int{}
	names := map[string]int{}
	var shares float64
	for i, p := range s.Pools {
		attr := fmt.Sprintf("Switch.Pools[%d]", i)
		if p.Name == "" {
			e.add(attr+".Name", "empty (every pool needs a name for the records)")
		} else if j, dup := names[p.Name]; dup {
			e.add(attr+".Name", "%q is also pool %d's name (names are unique)", p.Name, j)
		} else {
			names[p.Name] = i
		}
		switch {
		case p.Size.Share < 0 || p.Size.Bytes < 0:
			e.add(attr+".Size", "%v is negative (a share of the buffer left after headroom, or bytes)", p.Size)
		case !finite(float64(p.Size.Share)) || p.Size.Share > 1:
			e.add(attr+".Size", "%v is more than the whole buffer (100%%)", p.Size)
		case p.Size.Share == 0 && p.Size.Bytes == 0 && len(p.TrafficClasses) > 0:
			e.add(attr+".Size", "0: a pool with traffic classes needs space (a share such as \"40%%\" or a size)")
		case p.Size.Share == 0 && p.Size.Bytes > s.BufferSize:
			e.add(attr+".Size", "%v is more than the whole buffer (BufferSize %v): over-committed buffer", p.Size, s.BufferSize)
		}
		shares += float64(p.Size.Share)
		tcsAttr := attr + ".TrafficClasses"
		checkTCs(e, tcsAttr, p.TrafficClasses)
		var lossless, lossy []int
		for _, tc := range p.TrafficClasses {
			if tc < 0 || tc >= NumTC {
				continue
			}
			if i >= MaxPools {
				e.add(tcsAttr, "TC %d maps to pool index %d (pool indexes are 0..%d)", tc, i, MaxPools-1)
			}
			if j, ok := owner[tc]; ok && j != i {
				e.add(tcsAttr, "TC %d is also in pool %d (each TC maps to exactly one pool)", tc, j)
			} else {
				owner[tc] = i
			}
			if s.PfcOn(tc) {
				lossless = append(lossless, tc)
			} else {
				lossy = append(lossy, tc)
			}
		}
		if len(lossless) > 0 && len(lossy) > 0 {
			e.add(tcsAttr, "pool %q mixes lossless TCs %v (PFC enabled) with lossy TCs %v (a pool is lossless if its TCs have PFC, lossy otherwise; move them to separate pools or change PfcEnabled)",
				p.Name, lossless, lossy)
		}
	}
	if shares > 1+1e-12 {
		e.add("Switch.Pools", "the pools' shares add up to %v (more than 100%% of the buffer left after headroom: over-committed buffer)", units.Fraction(shares))
	}
	if len(s.Pools) > 0 {
		var missing []int
		for tc := 0; tc < NumTC; tc++ {
			if _, ok := owner[tc]; !ok {
				missing = append(missing, tc)
			}
		}
		if len(missing) > 0 {
			e.add("Switch.Pools", "TCs %v are in no pool (each TC maps to exactly one pool)", missing)
		}
	}
}

func (t *Topology) validate(e *Error) {
	counts := []struct {
		name string
		v    int
		min  int
	}{
		{"Pods", t.Pods, 1}, {"RacksPerPod", t.RacksPerPod, 1}, {"HostsPerRack", t.HostsPerRack, 1},
		{"FabricPerPod", t.FabricPerPod, 1}, {"SpinesPerPlane", t.SpinesPerPlane, 0},
	}
	if t.Pods > 1 {
		counts[4].min = 1
	}
	countsOK := true
	for _, c := range counts {
		if c.v > MaxPorts {
			e.add("Topology."+c.name, "%d is above %d (no switch has more than %d ports)", c.v, MaxPorts, MaxPorts)
			countsOK = false
			continue
		}
		if c.v < c.min {
			rule := fmt.Sprintf("%d is below %d", c.v, c.min)
			switch c.name {
			case "Pods", "RacksPerPod", "HostsPerRack":
				rule += " (a topology with no hosts: Pods x RacksPerPod x HostsPerRack must be >= 1)"
			case "SpinesPerPlane":
				rule += " (with Pods > 1 the pods meet at the spines)"
			default:
				rule += " (racks reach each other through the fabric switches)"
			}
			e.add("Topology."+c.name, "%s", rule)
		}
	}
	spinePorts := 0
	fabricPorts := t.RacksPerPod
	if t.Pods > 1 {
		spinePorts = t.Pods
		fabricPorts += t.SpinesPerPlane
	}
	for _, r := range []struct {
		attr  string
		tier  Tier
		ports int
	}{
		{"Topology.HostsPerRack", TierRack, t.HostsPerRack + t.FabricPerPod},
		{"Topology.RacksPerPod", TierFabric, fabricPorts},
		{"Topology.Pods", TierSpine, spinePorts},
	} {
		if countsOK && r.ports > MaxPorts {
			e.add(r.attr, "gives %s switches %d ports (at most %d per switch)", r.tier, r.ports, MaxPorts)
		}
	}
	if countsOK {
		racks := t.Pods * t.RacksPerPod
		nodes := racks*t.HostsPerRack + racks + t.Pods*t.FabricPerPod
		if t.Pods > 1 {
			nodes += t.FabricPerPod * t.SpinesPerPlane
		}
		if nodes > MaxNodes {
			e.add("Topology.HostsPerRack", "gives a topology of %d nodes, hosts and switches (at most %d): fewer Pods, RacksPerPod or HostsPerRack", nodes, MaxNodes)
		}
	}
	for _, l := range []struct {
		name string
		link Link
	}{{"HostLink", t.HostLink}, {"RackFabricLink", t.RackFabricLink}, {"FabricSpineLink", t.FabricSpineLink}} {
		if l.link.Speed <= 0 {
			e.add("Topology."+l.name+".Speed", "%v must be positive (speeds are > 0)", l.link.Speed)
		} else if l.link.Speed < MinSpeed {
			e.add("Topology."+l.name+".Speed", "%v is below %v (a bare number is bits per second: write a unit, e.g. 100Gbps)", l.link.Speed, MinSpeed)
		} else if l.link.Speed > MaxSpeed {
			e.add("Topology."+l.name+".Speed", "%v is above %v", l.link.Speed, MaxSpeed)
		}
		if l.link.PropagationDelay < 0 {
			e.add("Topology."+l.name+".PropagationDelay", "%v is negative (delays must be >= 0)", l.link.PropagationDelay)
		} else if l.link.PropagationDelay > MaxDelay {
			e.add("Topology."+l.name+".PropagationDelay", "%v is above %v", l.link.PropagationDelay, MaxDelay)
		}
	}
}

// Warnings returns the problems that do not stop a run, one line each, naming the
// attribute: a fixed Headroom below the formula of docs/model.md#headroom-sizing (per switch tier), a
// SwitchingCapacity below a tier's bandwidth (oversubscription, docs/model.md#switching-capacity), a fixed
// Xoff not below a lossless pool's size, a HashSalt shared by every switch, egress
// limits that the mode ignores. Call after Validate.
func (c *Config) Warnings() []string {
	var w []string
	// Headroom warnings often repeat across tiers (same speed and delay): one line
	// names every tier concerned.
	var order []string
	byTier := map[string][]string{}
	for _, tier := range c.Tiers() {
		l, err := c.Layout(tier)
		if err != nil {
			continue
		}
		for _, s := range l.Warnings {
			if byTier[s] == nil {
				order = append(order, s)
			}
			byTier[s] = append(byTier[s], tier.String())
		}
	}
	for _, s := range order {
		w = append(w, fmt.Sprintf("%s switches: %s", strings.Join(byTier[s], ", "), s))
	}
	for _, tier := range c.Tiers() {
		l, err := c.Layout(tier)
		if err != nil {
			continue
		}
		if r := c.Capacity(tier); r.Oversubscribed {
			w = append(w, fmt.Sprintf("%s switches: Switch.SwitchingCapacity %v is below their bandwidth %v (%d ports): oversubscribed %.3g:1 (reported only; forwarding is not limited)",
				tier, r.SwitchingCapacity, r.Bandwidth, r.Ports, float64(r.Bandwidth)/float64(r.SwitchingCapacity)))
		}
		if x := c.Switch.Xoff; x > 0 {
			for i, size := range l.PoolSizes {
				if c.Switch.Lossless(i) && x >= size {
					w = append(w, fmt.Sprintf("%s switches: Switch.Xoff %v is not below lossless pool %q's size %d B: ports pause only when the pool is full",
						tier, x, c.Switch.Pools[i].Name, int64(size)))
				}
			}
		}
	}
	s := &c.Switch
	if s.HashSalt != nil && s.EcmpHashMethod.Salted() {
		w = append(w, fmt.Sprintf("Switch.HashSalt %#x: every switch uses the same salt, so adjacent tiers' choices correlate; leave it unset for per-switch salts", *s.HashSalt))
	}
	if s.EgressLimitMode == EgressDynamic && (s.EgressQueueLimit != 0 || s.EgressQueueLimitBdp != 0) {
		w = append(w, "Switch.EgressQueueLimit/EgressQueueLimitBdp: ignored with EgressLimitMode dynamic")
	}
	if s.EgressLimitMode == EgressFixed && s.EgressQueueLimit > 0 && s.EgressQueueLimitBdp > 0 {
		w = append(w, fmt.Sprintf("Switch.EgressQueueLimit: ignored, EgressQueueLimitBdp %v x BDP takes precedence", s.EgressQueueLimitBdp))
	}
	return w
}
