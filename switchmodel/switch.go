package switchmodel

import (
	"fmt"
	"math/rand/v2"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// MaxPools is the largest number of buffer pools.
const MaxPools = config.MaxPools

type pool struct {
	name     string
	size     int64 // bytes, whole cells
	lossless bool
	vector   uint8 // PFC class-enable vector: every TC of the pool (lossless pools)
	shared   int64 // sum of shared(p, P) over ports = PoolUsed
	headroom int64 // sum of headroom(p, P) over ports
	egress   int64 // egress occupancy of the pool's classes
}

type ecnParams struct {
	enabled  bool
	min, max float64
	maxP     float64
	w        float64
}

// Switch is a shared-buffer switch (docs/model.md#switch-model): ports with strict-priority queues, the
// shared buffer manager with pools, headroom, PFC and dynamic thresholds, the ECN
// marker, and equal-cost forwarding through a Selector.
type Switch struct {
	nodeCore
	// What every packet's admission, forwarding and departure reads comes first
	// (after nodeCore): with the configuration last, a switch's hot fields take a
	// few cache lines rather than being spread over twenty.
	sel     Selector
	cell    int64
	pools   []pool
	tcPool  [NumTC]uint8
	ecnEnq  bool // Switch.EcnMarkAt enqueue: mark at admission, not at departure
	xoffDyn bool
	egDyn   bool
	// guarded: downPorts > 0 or the watchdog is on, so that admission checks the
	// egress port for a dead link or a dropping storm (one test on the hot path).
	guarded  bool
	fwdLat   units.Time
	xoffA    float64
	xoff     float64
	xon      float64
	xonOff   float64
	egA      float64
	egFixed  float64
	headroom int64 // total headroom bytes (all ports, lossless pools)
	tier     config.Tier

	routes []int32   // set index by destination host index, -1 none
	sets   [][]int32 // ports of each set's slots: its members in port order, or a weighted set's group table
	selSet []int     // the Selector's set id of each set (-1 for single-port sets)
	record []uint8   // whether packets routed through each set record their member (RecordMembers): recordSlot, recordMember (a weighted set: the slot's member) or 0
	view   setView
	// slotMember and members describe a weighted (WCMP) set: the member of each slot
	// and the members' ports; nil for an equal-weight set (docs/model.md#routing).
	slotMember [][]int16
	members    [][]int32

	ecn [NumTC]ecnParams // per class: read for ECN-capable packets only
	rng *rand.Rand

	// Failures (docs/model.md#failures-and-operations): downPorts counts the ports
	// whose link is down (admission checks the egress port only then); base is each
	// destination's installed set (routes holds -1 where that set has no live
	// member); dead marks those sets, live their live members (nil: all).
	downPorts int32
	base      []int32
	dead      []bool
	live      [][]bool
	// wd is the PFC watchdog (nil: off; docs/model.md#pfc-watchdog).
	wd *watchdog

	classMap config.ClassMap // the switch's classification (nodeCore.classes points here)
	cfg      config.Switch
}

// AddSwitch creates a switch named name in the given tier, configured by cfg (copied),
// choosing members of its equal-cost sets through sel (which may be nil only if every
// set has one port). The ECN generator is seeded from Options.Seed and the name
// (see the package doc). cfg is validated here for what the model needs; the buffer is
// laid out by Network.Start once the ports are known.
func (n *Network) AddSwitch(name string, tier config.Tier, cfg *config.Switch, sel Selector) (*Switch, error) {
	if n.started {
		return nil, ErrStarted
	}
	if err := n.checkNodes(name); err != nil {
		return nil, err
	}
	if err := checkSwitchConfig(cfg); err != nil {
		return nil, fmt.Errorf("switchmodel: switch %s: %w", name, err)
	}
	s := &Switch{tier: tier, cfg: *cfg, sel: sel, classMap: cfg.ClassMap()}
	s.classes = &s.classMap
	s.cfg.Pools = append([]config.Pool(nil), cfg.Pools...)
	s.view.s = s
	n.addNode(s, name)
	n.switches = append(n.switches, s)
	s1, s2 := config.ComponentSeed(n.opts.Seed, name+"/ecn")
	s.rng = rand.New(rand.NewPCG(s1, s2))

	c := cfg
	s.cell = int64(c.CellSize)
	s.fwdLat = c.ForwardingLatency
	s.ecnEnq = c.EcnMarkAt == config.EcnAtEnqueue
	s.xoffDyn = c.Xoff == 0
	s.xoffA = c.XoffAlpha
	s.xoff = float64(c.Xoff)
	s.xon = float64(c.Xon)
	s.xonOff = float64(c.XonOffset)
	s.egDyn = c.EgressLimitMode == config.EgressDynamic
	s.egA = c.EgressAlpha
	s.pools = make([]pool, len(c.Pools))
	for i, p := range c.Pools {
		s.pools[i].name = p.Name
		s.pools[i].lossless = c.Lossless(i)
		if s.pools[i].lossless {
			for _, tc := range p.TrafficClasses {
				s.pools[i].vector |= 1 << tc
			}
		}
	}
	for tc := 0; tc < NumTC; tc++ {
		s.tcPool[tc] = uint8(c.PoolOf(tc))
		e := c.Ecn(tc)
		s.ecn[tc] = ecnParams{enabled: e.Enabled, min: float64(e.MinThreshold), max: float64(e.MaxThreshold),
			maxP: e.MaxProbability, w: e.Weight}
	}
	return s, nil
}

// checkSwitchConfig enforces the docs/model.md#configuration-rules rules the model relies on; config's own
// validation gives the user-facing messages first.
func checkSwitchConfig(c *config.Switch) error {
	switch {
	case c.BufferSize <= 0:
		return fmt.Errorf("BufferSize %d must be > 0", c.BufferSize)
	case c.CellSize <= 0 || c.CellSize > c.BufferSize:
		return fmt.Errorf("CellSize %d must be > 0 and <= BufferSize", c.CellSize)
	case len(c.Pools) == 0 || len(c.Pools) > MaxPools:
		return fmt.Errorf("Pools: %d pools, want 1..%d", len(c.Pools), MaxPools)
	case c.Xon < 0 || c.XonOffset < 0:
		return fmt.Errorf("Xon %d and XonOffset %d must be >= 0", c.Xon, c.XonOffset)
	case c.Xoff < 0:
		return fmt.Errorf("Xoff %d must be >= 0", c.Xoff)
	case c.Xoff == 0 && c.XoffAlpha <= 0:
		return fmt.Errorf("XoffAlpha %g must be > 0 when Xoff is 0 (dynamic)", c.XoffAlpha)
	case c.EgressLimitMode == config.EgressDynamic && c.EgressAlpha <= 0:
		return fmt.Errorf("EgressAlpha %g must be > 0 in dynamic mode", c.EgressAlpha)
	case c.EcnWeight <= 0 || c.EcnWeight > 1:
		return fmt.Errorf("EcnWeight %g must be in (0,1]", c.EcnWeight)
	case c.ForwardingLatency < 0:
		return fmt.Errorf("ForwardingLatency %v must be >= 0", c.ForwardingLatency)
	}
	for tc := 0; tc < NumTC; tc++ {
		if c.PoolOf(tc) < 0 {
			return fmt.Errorf("Pools: TC %d is mapped to no pool", tc)
		}
		e := c.Ecn(tc)
		if e.MinThreshold > e.MaxThreshold {
			return fmt.Errorf("EcnMinThreshold %v > EcnMaxThreshold %v for TC %d", e.MinThreshold, e.MaxThreshold, tc)
		}
		if e.MaxProbability < 0 || e.MaxProbability > 1 {
			return fmt.Errorf("EcnMaxProbability %g for TC %d is outside [0,1]", e.MaxProbability, tc)
		}
	}
	for i, p := range c.Pools {
		pfc, lossy := false, false
		for _, tc := range p.TrafficClasses {
			if c.PfcOn(tc) {
				pfc = true
			} else {
				lossy = true
			}
		}
		if pfc && lossy {
			return fmt.Errorf("Pools[%d] %q mixes lossless (PFC) and lossy classes", i, p.Name)
		}
	}
	return nil
}

// Tier is the switch's role in the Clos.
func (s *Switch) Tier() config.Tier { return s.tier }

// Config returns the switch's configuration.
func (s *Switch) Config() *config.Switch { return &s.cfg }

// AddEqualCostSet registers a set of ports (in port order; member i is ports[i]) and
// returns its index for SetRoute. A set of one port is a plain route.
func (s *Switch) AddEqualCostSet(ports []int) (int, error) {
	if len(ports) == 0 {
		return 0, fmt.Errorf("switchmodel: switch %s: empty equal-cost set", s.name)
	}
	set := make([]int32, len(ports))
	for i, p := range ports {
		if p < 0 || p >= len(s.ports) {
			return 0, fmt.Errorf("switchmodel: switch %s: equal-cost set names port %d, switch has %d", s.name, p, len(s.ports))
		}
		set[i] = int32(p)
	}
	id := -1
	if len(set) > 1 {
		if s.sel == nil {
			return 0, fmt.Errorf("switchmodel: switch %s: an equal-cost set of %d ports needs a Selector", s.name, len(set))
		}
		id = s.sel.AddSet(len(set))
	}
	s.sets = append(s.sets, set)
	s.slotMember = append(s.slotMember, nil)
	s.members = append(s.members, nil)
	s.selSet = append(s.selSet, id)
	s.record = append(s.record, b2u(len(set) > 1)*recordSlot)
	s.dead = append(s.dead, false)
	s.live = append(s.live, nil)
	return len(s.sets) - 1, nil
}

// AddWeightedSet registers a WCMP set (docs/model.md#routing): ports in port order
// with their weights, member i replicated weights[i] times in the group table, in
// member order. The Selector chooses a slot of the table; the packet takes the
// slot's port and records the slot's member. Equal weights make an ordinary set.
func (s *Switch) AddWeightedSet(ports []int, weights []int) (int, error) {
	if len(weights) != len(ports) {
		return 0, fmt.Errorf("switchmodel: switch %s: %d weights for %d ports", s.name, len(weights), len(ports))
	}
	same := true
	total := 0
	for _, w := range weights {
		if w < 1 {
			return 0, fmt.Errorf("switchmodel: switch %s: weight %d (weights are >= 1)", s.name, w)
		}
		same = same && w == weights[0]
		total += w
	}
	if same || len(ports) < 2 {
		return s.AddEqualCostSet(ports)
	}
	if total > 1<<15 {
		return 0, fmt.Errorf("switchmodel: switch %s: a group table of %d slots (at most 32768)", s.name, total)
	}
	if s.sel == nil {
		return 0, fmt.Errorf("switchmodel: switch %s: a weighted set needs a Selector", s.name)
	}
	set := make([]int32, len(ports))
	slots := make([]int32, 0, total)
	members := make([]int16, 0, total)
	for i, p := range ports {
		if p < 0 || p >= len(s.ports) {
			return 0, fmt.Errorf("switchmodel: switch %s: weighted set names port %d, switch has %d", s.name, p, len(s.ports))
		}
		set[i] = int32(p)
		for range weights[i] {
			slots = append(slots, int32(p))
			members = append(members, int16(i))
		}
	}
	s.sets = append(s.sets, slots)
	s.slotMember = append(s.slotMember, members)
	s.members = append(s.members, set)
	s.selSet = append(s.selSet, s.sel.AddSet(total))
	s.record = append(s.record, recordMember)
	s.dead = append(s.dead, false)
	s.live = append(s.live, nil)
	return len(s.sets) - 1, nil
}

// Values of Switch.record.
const (
	recordSlot   uint8 = 1 // record the chosen slot: the member of an equal-weight set
	recordMember uint8 = 2 // record the slot's member (a weighted set)
)

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// MemberWeights returns a weighted set's member weights (slots per member), nil for
// an equal-weight set.
func (s *Switch) MemberWeights(set int) []int {
	sm := s.slotMember[set]
	if sm == nil {
		return nil
	}
	w := make([]int, len(s.members[set]))
	for _, m := range sm {
		w[m]++
	}
	return w
}

// SlotMember returns the member of set's group-table slot (the slot itself for an
// equal-weight set): the Selector's records count slots.
func (s *Switch) SlotMember(set, slot int) int {
	if m := s.slotMember[set]; m != nil {
		return int(m[slot])
	}
	return slot
}

// RecordMembers makes packets routed through set record the member they take
// (Packet.RackMember or FabricMember, by the switch's tier) even when the set has a
// single port, which is then member 0. Sets of two or more ports always record it.
// The builder marks every up-route set, so that a tier crossed through a single
// uplink is recorded as crossed.
func (s *Switch) RecordMembers(set int) {
	if s.record[set] == 0 {
		s.record[set] = recordSlot
	}
}

// SetRoute routes packets for destination host index dst through set.
func (s *Switch) SetRoute(dst int32, set int) error {
	if set < 0 || set >= len(s.sets) || dst < 0 {
		return fmt.Errorf("switchmodel: switch %s: SetRoute(%d, %d): no such set or host", s.name, dst, set)
	}
	for int(dst) >= len(s.routes) {
		s.routes = append(s.routes, -1)
		s.base = append(s.base, -1)
	}
	s.base[dst] = int32(set)
	s.routes[dst] = int32(set)
	if s.dead[set] {
		s.routes[dst] = -1
	}
	return nil
}

// StageMember says what a packet to destination host index dst that left the switch
// by port chose there: the set it was routed through, the port's member index in it,
// and stage, whether that was an ECMP stage (a set of two or more members, or one
// that records its member even of one port: RecordMembers). ok is false when the
// switch has no route to dst or port is not a member of its set. It reads the routes
// as they are now; replay asks it once per flow, when a packet finishes
// (docs/records.md#stagesarrow).
func (s *Switch) StageMember(dst int32, port int) (set, member int, stage, ok bool) {
	if dst < 0 || int(dst) >= len(s.base) || s.base[dst] < 0 {
		return 0, 0, false, false
	}
	set = int(s.base[dst])
	ports := s.sets[set]
	if s.members[set] != nil {
		ports = s.members[set]
	}
	for m, p := range ports {
		if int(p) == port {
			return set, m, len(ports) > 1 || s.record[set] != 0, true
		}
	}
	return set, 0, false, false
}

// Route returns the set installed for destination host dst (SetRoute), -1 none.
func (s *Switch) Route(dst int32) int {
	if dst < 0 || int(dst) >= len(s.base) {
		return -1
	}
	return int(s.base[dst])
}

// EqualCostSet returns the ports of set i's members (a weighted set's distinct
// ports, in member order).
func (s *Switch) EqualCostSet(i int) []int {
	ports := s.sets[i]
	if s.members[i] != nil {
		ports = s.members[i]
	}
	out := make([]int, len(ports))
	for j, p := range ports {
		out[j] = int(p)
	}
	return out
}

// NumSets is the number of sets added with AddEqualCostSet.
func (s *Switch) NumSets() int { return len(s.sets) }

// SelectorSet returns the Selector's id for set i, or -1 for a single-port set.
func (s *Switch) SelectorSet(i int) int { return s.selSet[i] }

// Bandwidth is the sum of the port speeds, each full-duplex port once (docs/model.md#switching-capacity).
func (s *Switch) Bandwidth() units.BitRate {
	var b units.BitRate
	for _, pt := range s.ports {
		b += pt.speed
	}
	return b
}

// SwitchingCapacity is the configured capacity, or Bandwidth when it is 0.
func (s *Switch) SwitchingCapacity() units.BitRate {
	if s.cfg.SwitchingCapacity > 0 {
		return s.cfg.SwitchingCapacity
	}
	return s.Bandwidth()
}

// Oversubscribed reports SwitchingCapacity < Bandwidth (it never limits forwarding).
func (s *Switch) Oversubscribed() bool { return s.SwitchingCapacity() < s.Bandwidth() }

// PoolInfo describes one laid-out pool.
type PoolInfo struct {
	Name     string
	Size     units.Bytes
	Lossless bool
	Classes  uint8 // bit tc set for every TC of the pool
}

// Pools returns the pool layout (after Start).
func (s *Switch) Pools() []PoolInfo {
	out := make([]PoolInfo, len(s.pools))
	for i, p := range s.pools {
		var cls uint8
		for tc := 0; tc < NumTC; tc++ {
			if int(s.tcPool[tc]) == i {
				cls |= 1 << tc
			}
		}
		out[i] = PoolInfo{Name: p.name, Size: units.Bytes(p.size), Lossless: p.lossless, Classes: cls}
	}
	return out
}

// Headroom returns the headroom of (port, pool) in bytes (0 for lossy pools).
func (s *Switch) Headroom(port, pool int) units.Bytes {
	return units.Bytes(s.ports[port].headroomCap[pool])
}

// layout sizes headroom per (port, lossless pool) and the pools (docs/model.md#shared-buffer, docs/model.md#headroom-sizing) with
// config.Switch.Layout, the same computation replay reports.
func (s *Switch) layout() (warnings []string, err error) {
	c := &s.cfg
	specs := make([]config.PortSpec, len(s.ports))
	for i, pt := range s.ports {
		specs[i] = config.PortSpec{Speed: pt.speed, PropagationDelay: pt.prop}
	}
	l, err := c.Layout(specs)
	if err != nil {
		return nil, fmt.Errorf("switchmodel: switch %s: %w", s.name, err)
	}
	for _, w := range l.Warnings {
		warnings = append(warnings, fmt.Sprintf("switch %s: %s", s.name, w))
	}
	s.headroom = 0
	for i, pt := range s.ports {
		for P := range s.pools {
			pt.headroomCap[P] = 0
			if s.pools[P].lossless {
				pt.headroomCap[P] = int64(l.Headroom[i])
				s.headroom += int64(l.Headroom[i])
			}
		}
	}
	for P := range s.pools {
		s.pools[P].size = int64(l.PoolSizes[P])
	}
	if s.cfg.PfcWatchdog.Enabled {
		s.wd = newWatchdog(&s.cfg.PfcWatchdog, len(s.ports))
		s.wd.sw = s
		s.wd.h = s.net.eng.RegisterNode(s.wd, s.id)
		s.guarded = true
	}
	if !s.egDyn {
		switch {
		case c.EgressQueueLimitBdp > 0:
			if s.net.opts.FabricBDP <= 0 {
				return nil, fmt.Errorf("switchmodel: switch %s: EgressQueueLimitBdp %g needs the fabric BDP (Options.FabricBDP)", s.name, c.EgressQueueLimitBdp)
			}
			s.egFixed = float64(int64(c.EgressQueueLimitBdp * float64(s.net.opts.FabricBDP)))
		default:
			s.egFixed = float64(c.EgressQueueLimit)
		}
	}
	if s.Oversubscribed() {
		warnings = append(warnings, fmt.Sprintf("switch %s: oversubscribed: SwitchingCapacity %v < bandwidth %v (sum of port speeds)",
			s.name, s.SwitchingCapacity(), s.Bandwidth()))
	}
	return warnings, nil
}

// Handle dispatches the switch's events.
func (s *Switch) Handle(now units.Time, kind int32, arg int64) {
	switch kind {
	case evFwd:
		pt := s.ports[arg]
		if s.net.failed && (pt.fwd.n == 0 || s.net.arena.get(pt.fwd.head).at != now) {
			return // the line was flushed (Flush)
		}
		id, p := pt.fwd.pop(&s.net.arena)
		if pt.fwd.n > 0 {
			s.net.eng.Schedule(s.net.arena.get(pt.fwd.head).at, s.h, evFwd, arg)
		}
		s.admit(now, pt, id, p)
	case evRefresh:
		s.refresh(now, arg)
	default:
		s.handleCommon(now, kind, arg)
	}
}

func (s *Switch) receive(now units.Time, pi int32, id PacketID, p *Packet) {
	pt := s.ports[pi]
	if s.fwdLat > 0 {
		p.at = now + s.fwdLat
		if pt.fwd.n == 0 {
			s.net.eng.Schedule(p.at, s.h, evFwd, int64(pi))
		}
		pt.fwd.push(&s.net.arena, id, p)
		return
	}
	s.admit(now, pt, id, p)
}

// admit routes a received data packet and runs the buffer manager's admission
// (docs/model.md#shared-buffer): lossless packets go to shared or headroom (pausing the upstream), lossy
// ones face the egress limit and pool capacity.
func (s *Switch) admit(now units.Time, in *port, id PacketID, p *Packet) {
	n := s.net
	if int(p.Dst) >= len(s.routes) || p.Dst < 0 || s.routes[p.Dst] < 0 {
		n.drop(now, &s.nodeCore, in, id, p, DropNoRoute)
		return
	}
	si := s.routes[p.Dst]
	set := s.sets[si]
	m := 0
	if len(set) > 1 {
		// m is the slot: the member, or a weighted set's group-table slot.
		s.view.set = set
		m = s.sel.Select(now, s.selSet[si], &n.keys[p.Key], p.TC, int(p.Frame), &s.view)
		if uint(m) >= uint(len(set)) {
			n.drop(now, &s.nodeCore, in, id, p, DropNoRoute) // no live member
			return
		}
	}
	if r := s.record[si]; r != 0 {
		member := m
		if r == recordMember {
			member = int(s.slotMember[si][m])
		}
		switch s.tier {
		case config.TierRack:
			p.RackMember = int16(member)
		case config.TierFabric:
			p.FabricMember = int16(member)
		}
	}
	e := s.ports[set[m]]
	tc := p.TC
	if s.guarded {
		if e.down {
			n.drop(now, &s.nodeCore, e, id, p, DropLinkDown) // before local repair
			return
		}
		if s.wd != nil && s.wd.dropsArrivals(e, tc) {
			n.drop(now, &s.nodeCore, e, id, p, DropPFCWatchdog)
			return
		}
	}
	P := int(s.tcPool[tc])
	pl := &s.pools[P]
	b := (int64(p.Frame) + s.cell - 1) / s.cell * s.cell

	if pl.lossless {
		xoff := s.xoffThreshold(pl)
		if in.ingHeadroom[P] == 0 && float64(in.ingShared[P]+b) <= xoff && pl.shared+b <= pl.size {
			in.ingShared[P] += b
			pl.shared += b
		} else {
			if !in.pausing[P] {
				s.pause(now, in, P)
			}
			if in.ingHeadroom[P]+b > in.headroomCap[P] {
				n.drop(now, &s.nodeCore, in, id, p, DropHeadroom)
				return
			}
			in.ingHeadroom[P] += b
			pl.headroom += b
		}
	} else {
		q := e.tc[tc].egress
		var limit float64
		if s.egDyn {
			limit = s.egA * float64(pl.size-pl.shared)
		} else {
			limit = s.egFixed
		}
		if float64(q+b) > limit {
			n.drop(now, &s.nodeCore, e, id, p, DropEgressLimit)
			return
		}
		if pl.shared+b > pl.size {
			n.drop(now, &s.nodeCore, e, id, p, DropPoolFull)
			return
		}
		in.ingShared[P] += b
		pl.shared += b
	}
	p.pool = uint8(P)
	p.inPort = in.idx
	p.charged = int32(b)
	e.tc[tc].egress += b
	e.egressTotal += b
	pl.egress += b
	if t := &e.tc[tc]; t.egress > t.watermark {
		t.watermark = t.egress
	}
	if s.ecnEnq {
		s.ecnMark(e, p) // EcnMarkAt enqueue: on the queue including p
	}
	p.at = now
	e.tc[tc].q.push(&n.arena, id, p)
	e.busyTC |= 1 << tc
	if s.wd != nil && e.paused&(1<<tc) != 0 {
		s.wdArm(now, e, int(tc))
	}
	n.kick(now, e)
}

func (s *Switch) xoffThreshold(pl *pool) float64 {
	if s.xoffDyn {
		// The explicit conversion rounds the product, so no platform fuses it with
		// the subtraction in xonThreshold (determinism across machines).
		return float64(s.xoffA * float64(pl.size-pl.shared))
	}
	return s.xoff
}

// XonThreshold = max(Xon, XoffThreshold - XonOffset) at the pool's current occupancy.
func (s *Switch) xonThreshold(pl *pool) float64 {
	x := s.xoffThreshold(pl) - s.xonOff
	if x < s.xon {
		x = s.xon
	}
	return x
}

// depart releases a packet that starts transmitting on port e: ingress charge
// headroom first then shared, egress queue; updates the queue's ECN average and marks;
// and resumes the ingress port's upstream when its headroom is empty and its shared
// occupancy is at or below XonThreshold.
func (s *Switch) depart(now units.Time, e *port, id PacketID, p *Packet) {
	P := int(p.pool)
	pl, in := &s.pools[P], s.ports[p.inPort]
	uncharge(e, in, pl, P, p)
	tc := p.TC
	if !s.ecnEnq {
		// EcnMarkAt dequeue (default): ecnMark, on the queue excluding p, written out.
		t, ep := &e.tc[tc], &s.ecn[tc]
		t.avg = ep.average(t.avg, t.egress)
		if ep.enabled && ect(p.ECN) && s.markProbability(ep, t.avg) {
			s.markCE(e, p)
		}
	}

	if pl.lossless && in.pausing[P] && in.ingHeadroom[P] == 0 && float64(in.ingShared[P]) <= s.xonThreshold(pl) {
		s.resume(now, in, P)
	}
}

// uncharge removes a packet of pool pl (index P) that came in on port in and leaves
// egress port e from the buffer accounting (docs/model.md#shared-buffer): its ingress
// charge headroom first then shared, and its egress queue.
func uncharge(e, in *port, pl *pool, P int, p *Packet) {
	b := int64(p.charged)
	h := min(in.ingHeadroom[P], b)
	in.ingHeadroom[P] -= h
	in.ingShared[P] -= b - h
	pl.headroom -= h
	pl.shared -= b - h
	pl.egress -= b
	e.tc[p.TC].egress -= b
	e.egressTotal -= b
	p.charged = 0
}

// release frees the buffer of a packet discarded from egress port e's queue (its
// link went down, or the PFC watchdog drops it): as a departure, without ECN, and
// the ingress port resumes its upstream by the same rule.
func (s *Switch) release(now units.Time, e *port, p *Packet) {
	P := int(p.pool)
	pl, in := &s.pools[P], s.ports[p.inPort]
	uncharge(e, in, pl, P, p)
	if pl.lossless && in.pausing[P] && in.ingHeadroom[P] == 0 && float64(in.ingShared[P]) <= s.xonThreshold(pl) {
		s.resume(now, in, P)
	}
}

// ecnMark updates the ECN average of p's egress queue on e with what the queue holds
// now (docs/model.md#ecn-marking: after p left it at dequeue, with p at enqueue) and
// marks p CE by the RED curve. depart has the same three lines written out: the
// compiler does not inline ecnMark (too costly), and the default dequeue path should
// cost what it did before EcnMarkAt.
func (s *Switch) ecnMark(e *port, p *Packet) {
	t, ep := &e.tc[p.TC], &s.ecn[p.TC]
	t.avg = ep.average(t.avg, t.egress)
	if ep.enabled && ect(p.ECN) && s.markProbability(ep, t.avg) {
		s.markCE(e, p)
	}
}

// average is the EWMA of the queue: (1-w) avg + w q. Explicit conversions round each
// product: no fused multiply-add on any platform, so the average, and the marks, are
// identical on every machine.
func (ep *ecnParams) average(avg float64, q int64) float64 {
	return float64((1-ep.w)*avg) + float64(ep.w*float64(q))
}

// ect reports an ECN-capable codepoint, ECT(0) or ECT(1).
func ect(ecn uint8) bool { return ecn == ECT0 || ecn == ECT1 }

// markCE marks p CE at egress port e.
func (s *Switch) markCE(e *port, p *Packet) {
	p.ECN = CE
	p.Marked = true
	e.stats[p.TC].ECNMarked++
	s.net.ceMarked++
}

// markProbability evaluates the RED curve at avg and draws: 0 below min (no draw),
// EcnMaxProbability*(avg-min)/(max-min) between (one draw), 1 at or above max (no
// draw); with min == max a step at min.
func (s *Switch) markProbability(ep *ecnParams, avg float64) bool {
	if avg < ep.min {
		return false
	}
	if avg >= ep.max {
		return true
	}
	pr := ep.maxP * (avg - ep.min) / (ep.max - ep.min)
	if pr <= 0 {
		return false
	}
	return s.rng.Float64() < pr
}

// MarkProbability returns the RED marking probability of class tc at average occupancy
// avg bytes (docs/model.md#ecn-marking).
func (s *Switch) MarkProbability(tc int, avg float64) float64 {
	ep := &s.ecn[tc]
	switch {
	case avg < ep.min:
		return 0
	case avg >= ep.max:
		return 1
	}
	return ep.maxP * (avg - ep.min) / (ep.max - ep.min)
}

func (s *Switch) sample(now units.Time) {
	for i := range s.pools {
		pl := &s.pools[i]
		s.net.obs.Buffer.BufferSample(BufferSample{Time: now, Switch: s.id, Pool: i, Shared: pl.shared,
			Headroom: pl.headroom, Ingress: pl.shared + pl.headroom, Egress: pl.egress})
	}
}

// Buffered counts the data packets the switch holds: queued for egress or waiting
// ForwardingLatency.
func (s *Switch) Buffered() int {
	n := 0
	for _, pt := range s.ports {
		for tc := range pt.tc {
			n += int(pt.tc[tc].q.n)
		}
		n += int(pt.fwd.n)
	}
	return n
}

// BufferUsage reports the pool's current shared, headroom and egress bytes.
func (s *Switch) BufferUsage(pool int) (shared, headroom, egress int64) {
	pl := &s.pools[pool]
	return pl.shared, pl.headroom, pl.egress
}

// CheckAccounting recomputes the buffer counters from the queued packets and compares:
// per (port, TC) egress bytes, per pool egress, per (port, pool) ingress total, per pool
// shared and headroom sums, nothing negative, headroom within its cap. With no packet
// buffered every counter must be exactly zero.
func (s *Switch) CheckAccounting() error {
	a := &s.net.arena
	nP := len(s.pools)
	ing := make([][]int64, len(s.ports))
	for i := range ing {
		ing[i] = make([]int64, nP)
	}
	poolEg := make([]int64, nP)
	for _, e := range s.ports {
		var tot int64
		for tc := 0; tc < NumTC; tc++ {
			var qb int64
			for id := e.tc[tc].q.head; id != NoPacket; id = a.get(id).next {
				p := a.get(id)
				qb += int64(p.charged)
				ing[p.inPort][p.pool] += int64(p.charged)
				poolEg[p.pool] += int64(p.charged)
			}
			if (e.tc[tc].q.n > 0) != (e.busyTC&(1<<tc) != 0) {
				return fmt.Errorf("switch %s port %d TC %d: scheduler mask out of step with the queue", s.name, e.idx, tc)
			}
			if qb != e.tc[tc].egress {
				return fmt.Errorf("switch %s port %d TC %d: egress %d B, queued packets hold %d B", s.name, e.idx, tc, e.tc[tc].egress, qb)
			}
			tot += qb
		}
		if tot != e.egressTotal {
			return fmt.Errorf("switch %s port %d: egress total %d B, queues hold %d B", s.name, e.idx, e.egressTotal, tot)
		}
	}
	for P := range s.pools {
		pl := &s.pools[P]
		var sh, hr int64
		for i, pt := range s.ports {
			if pt.ingShared[P] < 0 || pt.ingHeadroom[P] < 0 {
				return fmt.Errorf("switch %s port %d pool %d: negative ingress shared %d / headroom %d", s.name, i, P, pt.ingShared[P], pt.ingHeadroom[P])
			}
			if pt.ingHeadroom[P] > pt.headroomCap[P] {
				return fmt.Errorf("switch %s port %d pool %d: headroom %d over its cap %d", s.name, i, P, pt.ingHeadroom[P], pt.headroomCap[P])
			}
			if got := pt.ingShared[P] + pt.ingHeadroom[P]; got != ing[i][P] {
				return fmt.Errorf("switch %s port %d pool %d: ingress %d B, packets from it hold %d B", s.name, i, P, got, ing[i][P])
			}
			sh += pt.ingShared[P]
			hr += pt.ingHeadroom[P]
		}
		if sh != pl.shared || hr != pl.headroom || poolEg[P] != pl.egress {
			return fmt.Errorf("switch %s pool %d: shared %d/%d headroom %d/%d egress %d/%d (counter/sum)", s.name, P, pl.shared, sh, pl.headroom, hr, pl.egress, poolEg[P])
		}
		if pl.shared > pl.size {
			return fmt.Errorf("switch %s pool %d: shared %d over size %d", s.name, P, pl.shared, pl.size)
		}
	}
	return nil
}
