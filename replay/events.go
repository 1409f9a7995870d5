package replay

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/tracefabric/tracefabric/fabric"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// Events over time (docs/model.md#failures-and-operations): the configuration's
// Events resolved on the fabric (planEvents), and the runner that applies them during
// the run. Each event acts at its time on the nodes it touches (a link on its two
// ends, a switch on itself); routing then changes per switch: the switches next to a
// failure prune the lost members after LocalRepairDelay (local repair), and every
// switch installs the routes of the fabric's new state after ReconvergenceDelay
// (remote reconvergence), one engine event per switch whose routes changed.

// plannedEvent is one event on the fabric, a flap expanded into its downs and ups.
type plannedEvent struct {
	at    units.Time // simulated time
	src   int        // its entry in Events
	kind  config.EventKind
	links []int32 // link ids (link events)
	nodes []int32 // node indices (node events)
	speed units.BitRate
	cycle int // the flap's cycle, -1 for others
}

// routing reports whether the event changes what routing sees.
func (e *plannedEvent) routing() bool {
	switch e.kind {
	case config.Speed, config.Stall, config.Unstall:
		return false
	}
	return true
}

// down reports whether the event takes links or switches down.
func (e *plannedEvent) down() bool { return e.kind == config.LinkDown || e.kind == config.SwitchDown }

// matchNodes returns the nodes a name or glob pattern names, in node order.
func matchNodes(t *Topology, pat string) ([]int32, error) {
	if i, ok := t.Lookup(pat); ok {
		return []int32{i}, nil
	}
	var out []int32
	for i := range t.Nodes {
		ok, err := path.Match(pat, t.Nodes[i].Name)
		if err != nil {
			return nil, fmt.Errorf("pattern %q: %v", pat, err)
		}
		if ok {
			out = append(out, int32(i))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%q is no node and matches none (unknown node)", pat)
	}
	return out, nil
}

// planEvents resolves cfg's Events on the fabric at speedup: names and patterns to
// links and nodes, flaps to their downs and ups, times to simulated time; and checks
// that the events of each link and switch alternate (no down of what is down, no up
// of what is up, no two at one instant). Every problem is one line naming the event.
func planEvents(t *Topology, cfg *config.Config, speedup float64) ([]plannedEvent, error) {
	var plan []plannedEvent
	var errs []string
	bad := func(ev *config.Event, i int, attr, format string, args ...any) {
		where := ""
		if w := ev.Where(); w != "" {
			where = w + ": "
		}
		errs = append(errs, fmt.Sprintf("%sEvents[%d].%s: %s", where, i, attr, fmt.Sprintf(format, args...)))
	}
	simTime := func(at units.Time) units.Time {
		if speedup == 1 {
			return at
		}
		return units.Time(float64(at) / speedup)
	}
	for i := range cfg.Events {
		ev := &cfg.Events[i]
		p := plannedEvent{at: simTime(ev.At), src: i, kind: ev.Kind, speed: ev.Speed, cycle: -1}
		if ev.Kind.OnLink() {
			if len(ev.Link) != 2 {
				bad(ev, i, "Link", "needs two nodes")
				continue
			}
			a, err := matchNodes(t, ev.Link[0])
			if err != nil {
				bad(ev, i, "Link", "%v", err)
				continue
			}
			b, err := matchNodes(t, ev.Link[1])
			if err != nil {
				bad(ev, i, "Link", "%v", err)
				continue
			}
			inB := map[int32]bool{}
			for _, n := range b {
				inB[n] = true
			}
			seen := map[int32]bool{}
			for _, n := range a {
				for _, pt := range t.Nodes[n].Ports {
					if inB[pt.Peer] && !seen[pt.Link] {
						seen[pt.Link] = true
						p.links = append(p.links, pt.Link)
					}
				}
			}
			if len(p.links) == 0 {
				bad(ev, i, "Link", "no link joins %s and %s", ev.Link[0], ev.Link[1])
				continue
			}
			slices.Sort(p.links)
		} else {
			ns, err := matchNodes(t, ev.Node)
			if err != nil {
				bad(ev, i, "Node", "%v", err)
				continue
			}
			wantHost := ev.Kind == config.Stall || ev.Kind == config.Unstall
			for _, n := range ns {
				if t.Nodes[n].IsHost() != wantHost {
					what := "a switch"
					if wantHost {
						what = "a host"
					}
					bad(ev, i, "Node", "%s is not %s (%s names %s)", t.Nodes[n].Name, what, ev.Kind, what)
					ns = nil
					break
				}
			}
			if ns == nil {
				continue
			}
			p.nodes = ns
		}
		if ev.Kind == config.Flap {
			for c := range ev.Count {
				d := p
				d.kind, d.cycle = config.LinkDown, c
				d.at = simTime(ev.At + units.Time(c)*ev.Period)
				u := d
				u.kind = config.LinkUp
				u.at = simTime(ev.At + units.Time(c)*ev.Period + ev.FlapDown())
				plan = append(plan, d, u)
			}
			continue
		}
		plan = append(plan, p)
	}
	sort.SliceStable(plan, func(i, j int) bool { return plan[i].at < plan[j].at })
	// Each link's and switch's events alternate.
	type last struct {
		down bool
		ev   int // index in plan of the last event on it
	}
	links := map[int32]*last{}
	nodes := map[int32]*last{}
	check := func(m map[int32]*last, id int32, k int, down bool, what string) {
		l := m[id]
		if l == nil {
			l = &last{ev: -1}
			m[id] = l
		}
		ev := &plan[k]
		c := &cfg.Events[ev.src]
		switch {
		case l.ev >= 0 && plan[l.ev].at == ev.at:
			bad(c, ev.src, "At", "%s %s at the same time as Events[%d] (%s): overlapping events on one %s", ev.kind, what, plan[l.ev].src, plan[l.ev].kind, strings.Fields(what)[0])
		case down && l.down:
			bad(c, ev.src, "At", "%s %s at %v overlaps Events[%d] (%s at %v, not up again before): overlapping events on one %s",
				ev.kind, what, ev.at, plan[l.ev].src, plan[l.ev].kind, plan[l.ev].at, strings.Fields(what)[0])
		case !down && !l.down:
			bad(c, ev.src, "At", "%s %s at %v: it is not down then", ev.kind, what, ev.at)
		}
		l.down, l.ev = down, k
	}
	for k := range plan {
		ev := &plan[k]
		switch ev.kind {
		case config.LinkDown, config.LinkUp:
			for _, l := range ev.links {
				lk := &t.Links[l]
				check(links, l, k, ev.kind == config.LinkDown, fmt.Sprintf("link %s - %s", t.Nodes[lk.A.Node].Name, t.Nodes[lk.B.Node].Name))
			}
		case config.SwitchDown, config.SwitchUp:
			for _, n := range ev.nodes {
				check(nodes, n, k, ev.kind == config.SwitchDown, "switch "+t.Nodes[n].Name)
			}
		}
	}
	// Drains and stalls alternate too, but are not overlaps of a link: their repeat
	// is harmless and ignored.
	if len(errs) > 0 {
		if len(errs) > 20 {
			errs = append(errs[:20], fmt.Sprintf("(and %d more)", len(errs)-20))
		}
		return nil, inputErrf("%s", strings.Join(errs, "\n"))
	}
	return plan, nil
}

// Engine event kinds of the runner.
const (
	evApply   int32 = iota // arg: the planned event
	evLocal                // arg: event | switch node << 32: prune the lost members
	evInstall              // arg: event | switch node << 32: install the event's routes
)

// eventStats is what one planned event did (run.json events).
type eventStats struct {
	localPs, reconvergedPs  units.Time // last local repair, last install (-1: none)
	setsChanged, routesMade int64      // sets whose members changed; destinations moved to another set
	flowsMoved              int64
	dropped                 [switchmodel.NumDropReasons]int64 // drops of the failure reasons while it was the latest event
	changed                 []setRef                          // the sets it changed
	after                   []memberLoad                      // loads from its reconvergence to the next event (fillAfter)
	afterFrom, afterTo      units.Time
}

type setRef struct {
	sw  int32 // node
	set int   // the switch's set index
}

// memberLoad is one member's load over an interval.
type memberLoad struct {
	ref    setRef
	member int
	bytes  int64
	live   bool // at the end of the interval
}

// eventRunner applies the plan during a run.
type eventRunner struct {
	s     *sim
	plan  []plannedEvent
	stats []eventStats
	h     switchmodel.HandlerID
	state fabric.State
	// routes[k] are the routes of the fabric's state after event k (nil: unchanged
	// or installed everywhere); intended are the latest routes computed.
	routes   []*fabric.Routes
	intended *fabric.Routes
	pending  []int // installs left per event
	// cur[x][r] is switch node x's set for rack r (x - Hosts), -1 at its own rack.
	cur     [][]int
	latest  int // the last event applied (-1 none): drops are attributed to it
	snap    map[setRef][]int64
	snapFor int   // the event whose after-loads snap holds (-1 none)
	phys    []int // per link: reasons it is down (a link event, a down end)
}

func newEventRunner(s *sim, plan []plannedEvent) *eventRunner {
	t := s.pr.Topo
	er := &eventRunner{s: s, plan: plan, stats: make([]eventStats, len(plan)), latest: -1, snapFor: -1,
		routes: make([]*fabric.Routes, len(plan)), pending: make([]int, len(plan)), intended: t.Routes,
		phys: make([]int, len(t.Links))}
	er.state = fabric.State{LinkDown: make([]bool, len(t.Links)), NodeDown: make([]bool, len(t.Nodes)), Drained: make([]bool, len(t.Nodes))}
	for i := range er.stats {
		er.stats[i].localPs, er.stats[i].reconvergedPs = -1, -1
	}
	er.cur = make([][]int, len(t.Nodes)-t.Hosts)
	for x := t.Hosts; x < len(t.Nodes); x++ {
		sw := s.net.Node(int32(x)).(*switchmodel.Switch)
		row := make([]int, len(t.Racks))
		for r, rack := range t.Racks {
			row[r] = -1
			if rack.Node != int32(x) && len(rack.Hosts) > 0 {
				row[r] = sw.Route(rack.Hosts[0])
			}
		}
		er.cur[x-t.Hosts] = row
	}
	er.h = s.eng.Register(er)
	for k := range plan {
		s.eng.Schedule(plan[k].at, er.h, evApply, int64(k))
	}
	return er
}

// Handle runs the runner's engine events.
func (er *eventRunner) Handle(now units.Time, kind int32, arg int64) {
	k := int(int32(arg))
	x := int32(arg >> 32)
	var err error
	switch kind {
	case evApply:
		err = er.apply(now, k)
	case evLocal:
		err = er.local(now, k, x)
	case evInstall:
		err = er.install(now, k, x)
	}
	er.s.setErr(err)
}

func (er *eventRunner) sw(x int32) *switchmodel.Switch {
	return er.s.net.Node(x).(*switchmodel.Switch)
}

// setPhys counts a reason for link l to be down (d = +1) or one less (d = -1) and
// takes the link down or up when the count leaves or reaches 0.
func (er *eventRunner) setPhys(l int32, d int) error {
	was := er.phys[l] > 0
	er.phys[l] += d
	if now := er.phys[l] > 0; now != was {
		lk := &er.s.pr.Topo.Links[l]
		return er.s.net.SetLinkDown(er.s.net.Node(lk.A.Node), int(lk.A.Port), now)
	}
	return nil
}

func (er *eventRunner) apply(now units.Time, k int) error {
	ev := &er.plan[k]
	t := er.s.pr.Topo
	er.closeAfter(now)
	er.latest = k
	local := map[int32]bool{}
	switch ev.kind {
	case config.LinkDown, config.LinkUp:
		down := ev.kind == config.LinkDown
		d := 1
		if !down {
			d = -1
		}
		for _, l := range ev.links {
			er.state.LinkDown[l] = down
			if err := er.setPhys(l, d); err != nil {
				return err
			}
			lk := &t.Links[l]
			for _, n := range []int32{lk.A.Node, lk.B.Node} {
				if !t.Nodes[n].IsHost() {
					local[n] = true
				}
			}
		}
	case config.SwitchDown, config.SwitchUp:
		down := ev.kind == config.SwitchDown
		d := 1
		if !down {
			d = -1
		}
		for _, n := range ev.nodes {
			er.state.NodeDown[n] = down
			if down {
				er.sw(n).Flush()
			}
			for _, p := range t.Nodes[n].Ports {
				if err := er.setPhys(p.Link, d); err != nil {
					return err
				}
				if !t.Nodes[p.Peer].IsHost() {
					local[p.Peer] = true
				}
			}
		}
	case config.Drain, config.Undrain:
		for _, n := range ev.nodes {
			er.state.Drained[n] = ev.kind == config.Drain
		}
	case config.Speed:
		for _, l := range ev.links {
			lk := &t.Links[l]
			if err := er.s.net.SetLinkSpeed(er.s.net.Node(lk.A.Node), int(lk.A.Port), ev.speed); err != nil {
				return err
			}
		}
	case config.Stall, config.Unstall:
		var vec uint8
		for _, tc := range er.s.cfg.Switch.PfcEnabled {
			vec |= 1 << tc
		}
		for _, n := range ev.nodes {
			er.s.net.Stall(er.s.net.Node(n).(*switchmodel.Host), vec, ev.kind == config.Stall)
		}
	}
	if !ev.routing() {
		er.openAfter(now, k)
		return nil
	}
	// Incremental: only the racks and switches the change touches are recomputed
	// (fabric.Reroute equals a full fabric.Route of the state).
	rt, changed := er.intended.Reroute(&er.state, fabric.Change{Links: ev.links, Nodes: ev.nodes})
	er.routes[k] = rt
	er.intended = rt
	cfg := &er.s.cfg.Routing
	if ev.down() {
		for _, x := range sortedNodes(local) {
			er.s.eng.Schedule(now+cfg.LocalRepairDelay, er.h, evLocal, int64(k)|int64(x)<<32)
		}
	}
	// Installs at the switches whose routes changed and at those next to the event,
	// in node order.
	for _, x := range changed {
		local[x] = true
	}
	for _, x := range sortedNodes(local) {
		er.pending[k]++
		er.s.eng.Schedule(now+cfg.ReconvergenceDelay, er.h, evInstall, int64(k)|int64(x)<<32)
	}
	if er.pending[k] == 0 {
		er.routes[k] = nil
		er.openAfter(now, k)
	}
	return nil
}

func sortedNodes(m map[int32]bool) []int32 {
	out := make([]int32, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// portUp reports whether switch x's port p has its link up.
func (er *eventRunner) portUp(x int32, p int32) bool {
	return er.phys[er.s.pr.Topo.Nodes[x].Ports[p].Link] == 0
}

// local prunes, at switch x, every member whose link is down from every set (local
// repair of event k).
func (er *eventRunner) local(now units.Time, k int, x int32) error {
	sw := er.sw(x)
	st := &er.stats[k]
	for set := 0; set < sw.NumSets(); set++ {
		ports := sw.EqualCostSet(set)
		live := sw.Live(set)
		if live == nil {
			live = make([]bool, len(ports))
			for i := range live {
				live[i] = true
			}
		}
		changed := false
		for m, p := range ports {
			if live[m] && !er.portUp(x, int32(p)) {
				live[m], changed = false, true
			}
		}
		if changed {
			if err := er.setLive(k, x, set, live); err != nil {
				return err
			}
		}
	}
	st.localPs = now
	return nil
}

func (er *eventRunner) setLive(k int, x int32, set int, live []bool) error {
	moved, err := er.sw(x).SetLive(set, live, k)
	if err != nil {
		return err
	}
	st := &er.stats[k]
	st.setsChanged++
	st.flowsMoved += moved
	st.changed = append(st.changed, setRef{x, set})
	return nil
}

// install makes switch x use event k's routes: toward each rack the next hops of the
// fabric's state after event k, less the ports whose link x sees down. A set whose
// racks all want one subset of its ports keeps its index with those members live; a
// rack that wants another set moves to a set with exactly those ports live (made if
// none exists).
func (er *eventRunner) install(now units.Time, k int, x int32) error {
	t := er.s.pr.Topo
	rt := er.routes[k]
	sw := er.sw(x)
	i := int(x) - t.Hosts
	cur := er.cur[i]
	// Desired live ports per rack.
	want := make([][]int32, len(t.Racks))
	for r := range t.Racks {
		if cur[r] < 0 && t.Racks[r].Node == x {
			continue
		}
		if s := rt.ByRack[i][r]; s >= 0 {
			for _, p := range rt.Sets[i][s].Ports {
				if er.portUp(x, p) {
					want[r] = append(want[r], p)
				}
			}
		}
	}
	// Racks by current set.
	bySet := map[int][]int{}
	var sets []int
	for r, s := range cur {
		if s < 0 {
			continue
		}
		if _, ok := bySet[s]; !ok {
			sets = append(sets, s)
		}
		bySet[s] = append(bySet[s], r)
	}
	for _, s := range sets {
		racks := bySet[s]
		base := sw.EqualCostSet(s)
		// The keeper: the largest group of racks wanting one subset of base (first rack on ties).
		groups := map[string][]int{}
		var order []string
		for _, r := range racks {
			key := fmt.Sprint(want[r])
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], r)
		}
		keep := ""
		for _, key := range order {
			r0 := groups[key][0]
			if subset(want[r0], base) && (keep == "" || len(groups[key]) > len(groups[keep])) {
				keep = key
			}
		}
		for _, key := range order {
			rs := groups[key]
			w := want[rs[0]]
			if key == keep {
				live := mask(w, base)
				if !slices.Equal(live, liveOf(sw, s, len(base))) {
					if err := er.setLive(k, x, s, live); err != nil {
						return err
					}
				}
				continue
			}
			ns, err := er.setFor(k, x, w, base)
			if err != nil {
				return err
			}
			for _, r := range rs {
				cur[r] = ns
				for _, h := range t.Racks[r].Hosts {
					if err := sw.SetRoute(h, ns); err != nil {
						return err
					}
					er.stats[k].routesMade++
				}
			}
		}
	}
	// Host ports of a rack switch: live while their link is up.
	for r, rack := range t.Racks {
		if rack.Node != x {
			continue
		}
		_ = r
		for _, h := range rack.Hosts {
			set := sw.Route(h)
			up := er.portUp(x, t.HostPort(h))
			if l := sw.Live(set); (l == nil) != up {
				if err := er.setLive(k, x, set, []bool{up}); err != nil {
					return err
				}
			}
		}
	}
	st := &er.stats[k]
	st.reconvergedPs = now
	if er.pending[k]--; er.pending[k] == 0 {
		er.routes[k] = nil
		er.openAfter(now, k)
	}
	return nil
}

// setFor returns a set of switch x whose live members are exactly the ports w: an
// existing set of those ports with every member live, or a new one (of w's ports,
// equal weights); for an empty w, a set of base's ports with no live member.
func (er *eventRunner) setFor(k int, x int32, w []int32, base []int) (int, error) {
	sw := er.sw(x)
	ports := make([]int, 0, len(w))
	for _, p := range w {
		ports = append(ports, int(p))
	}
	if len(ports) == 0 {
		ports = base
	}
	for s := 0; s < sw.NumSets(); s++ {
		if !slices.Equal(sw.EqualCostSet(s), ports) {
			continue
		}
		l := sw.Live(s)
		if (len(w) > 0 && l == nil) || (len(w) == 0 && l != nil && !anyTrue(l)) {
			return s, nil
		}
	}
	ns, err := sw.AddEqualCostSet(ports)
	if err != nil {
		return 0, err
	}
	if er.s.pr.Topo.Up(x, ports[0]) {
		sw.RecordMembers(ns)
	}
	if len(w) == 0 {
		if err := er.setLive(k, x, ns, make([]bool, len(ports))); err != nil {
			return 0, err
		}
	}
	return ns, nil
}

func anyTrue(b []bool) bool { return slices.Contains(b, true) }

// memberBytes returns the bytes each member of every set with a Selector carried so
// far, by (switch, set) (a weighted set's slots summed per member).
func (er *eventRunner) memberBytes() map[setRef][]int64 {
	out := map[setRef][]int64{}
	for _, sw := range er.s.net.Switches() {
		b, ok := sw.Selector().(*ecmp.Balancer)
		if !ok {
			continue
		}
		recs := b.Records()
		bySel := setsBySelector(sw)
		for _, r := range recs {
			set := bySel[r.Set]
			ref := setRef{sw.ID(), set}
			m := out[ref]
			if m == nil {
				m = make([]int64, len(sw.EqualCostSet(set)))
				out[ref] = m
			}
			m[sw.SlotMember(set, r.Member)] += r.Bytes
		}
	}
	return out
}

// openAfter starts the after-interval of event k: from now (its reconvergence) to the
// next event or the end of the run.
func (er *eventRunner) openAfter(now units.Time, k int) {
	er.closeAfter(now)
	er.snap, er.snapFor = er.memberBytes(), k
	er.stats[k].afterFrom = now
}

// closeAfter ends the open after-interval at now: the loads of the sets its event
// changed.
func (er *eventRunner) closeAfter(now units.Time) {
	k := er.snapFor
	if k < 0 {
		return
	}
	st := &er.stats[k]
	st.afterTo = now
	cur := er.memberBytes()
	seen := map[setRef]bool{}
	for _, ref := range st.changed {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		before := er.snap[ref]
		sw := er.sw(ref.sw)
		live := liveOf(sw, ref.set, len(sw.EqualCostSet(ref.set)))
		for m, b := range cur[ref] {
			var b0 int64
			if m < len(before) {
				b0 = before[m]
			}
			st.after = append(st.after, memberLoad{ref: ref, member: m, bytes: b - b0, live: live[m]})
		}
	}
	er.snap, er.snapFor = nil, -1
}

// subset reports whether every port of w is in base.
func subset(w []int32, base []int) bool {
	for _, p := range w {
		if !slices.Contains(base, int(p)) {
			return false
		}
	}
	return true
}

// mask returns, per member of base, whether its port is in w.
func mask(w []int32, base []int) []bool {
	m := make([]bool, len(base))
	for i, p := range base {
		m[i] = slices.Contains(w, int32(p))
	}
	return m
}

// liveOf returns set s's live members (all true when every member is).
func liveOf(sw *switchmodel.Switch, s, n int) []bool {
	if l := sw.Live(s); l != nil {
		return l
	}
	m := make([]bool, n)
	for i := range m {
		m[i] = true
	}
	return m
}

// eventsJSON is run.json's events.
func (er *eventRunner) eventsJSON() []records.Event {
	s := er.s
	t := s.pr.Topo
	var bytes []int64
	for _, sw := range s.net.Switches() {
		if b, ok := sw.Selector().(*ecmp.Balancer); ok {
			_, by := b.Rerouted()
			for len(bytes) < len(by) {
				bytes = append(bytes, 0)
			}
			for k, v := range by {
				bytes[k] += v
			}
		}
	}
	out := make([]records.Event, len(er.plan))
	for k := range er.plan {
		ev, st := &er.plan[k], &er.stats[k]
		c := &s.cfg.Events[ev.src]
		kind := ev.kind
		e := records.Event{Index: ev.src, Cycle: ev.cycle, Kind: string(kind), Target: c.Target(), TimePs: int64(ev.at),
			Links: ev.links, LocalRepairPs: int64(st.localPs), ReconvergedPs: int64(st.reconvergedPs),
			SetsChanged: st.setsChanged, RoutesMoved: st.routesMade, FlowsMoved: st.flowsMoved, Dropped: map[records.DropReason]int64{}}
		if k < len(bytes) {
			e.BytesRerouted = bytes[k]
		}
		for _, n := range ev.nodes {
			e.Nodes = append(e.Nodes, t.Nodes[n].Name)
		}
		for _, r := range []switchmodel.DropReason{switchmodel.DropNoRoute, switchmodel.DropLinkDown, switchmodel.DropPFCWatchdog} {
			e.Dropped[reasonOf[r]] = st.dropped[r]
		}
		if len(st.after) > 0 {
			a := &records.EventAfter{FromPs: int64(st.afterFrom), ToPs: int64(st.afterTo)}
			var most *records.EventMember
			for i := 0; i < len(st.after); {
				ref := st.after[i].ref
				sw := er.sw(ref.sw)
				ports := sw.EqualCostSet(ref.set)
				es := records.EventSet{Node: sw.Name(), Set: int32(ref.set)}
				var total int64
				j := i
				for ; j < len(st.after) && st.after[j].ref == ref; j++ {
					total += st.after[j].bytes
				}
				for ; i < j; i++ {
					ml := st.after[i]
					m := records.EventMember{Node: sw.Name(), Set: int32(ref.set), Member: int32(ml.member), Port: int32(ports[ml.member]),
						Peer: t.Nodes[t.Nodes[ref.sw].Ports[ports[ml.member]].Peer].Name, Live: ml.live, Bytes: ml.bytes}
					if total > 0 {
						m.Share = float64(ml.bytes) / float64(total)
					}
					es.Members = append(es.Members, m)
					if most == nil || m.Bytes > most.Bytes {
						mm := m
						most = &mm
					}
				}
				a.Sets = append(a.Sets, es)
			}
			a.MostLoaded = most
			e.After = a
		}
		out[k] = e
	}
	return out
}

// drop attributes a drop of a failure reason to the latest event.
func (er *eventRunner) drop(r switchmodel.DropReason) {
	if er.latest >= 0 {
		er.stats[er.latest].dropped[r]++
	}
}
