package analysis

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// ErrRecordsMismatch is returned when a record file's row count differs from the one
// run.json lists for it.
var ErrRecordsMismatch = errors.New("analysis: record file does not match run.json")

// Load reads a run directory (run.json and the record files, see docs/records.md)
// into a Run. See LoadWith.
func Load(runDir string) (*Run, error) { return LoadWith(runDir, nil) }

// LoadWith reads a run directory, telling progress (if not nil) the file being read and
// rows done out of run.json's count.
//
// It refuses a directory without run.json, a run of another schema version
// (records.ErrSchemaVersion) or not marked complete (records.ErrIncomplete), a missing
// or truncated record file (records.ErrNotRecordFile), and a file whose row count
// differs from run.json's (ErrRecordsMismatch). packets.arrow (replay
// --record-packets) and transport.arrow (closed-loop runs) are optional: absent
// unless run.json lists them, as is stages.arrow (fabrics with ECMP stages beyond the
// rack and fabric uplinks). Every file is streamed once, in time linear in its rows;
// memory holds the ports, sets, pause intervals, the per-flow table (112 bytes a
// flow: 96 and two stages of 8; 8 more per stage beyond two with stages.arrow; a comparison adds each
// flow's shares of the member loads) and fixed-size aggregates, never the drops,
// events or packets themselves. Roles: a topology file's run labels nodes with its
// switches' roles (run.json topology.switches), which the per-tier tables group by.
//
// Reconstruction rules: a host's rack is the peer of its NIC port in ports.arrow. A
// switch's equal-cost set for the per-flow table is its set in loadbalance.arrow (the
// lowest-numbered if it has several); a flow's fabric switch is the peer of its rack
// member, its spine the peer of its fabric member, and the destination pod's fabric
// switch the spine's neighbour linked to the destination rack; a switch with a single
// uplink (no set in loadbalance.arrow) leads to that uplink's peer as member 0. Flows
// record, per tier, the member of their first packet that passed the tier's set, so
// under flowlet balancing later packets may have gone elsewhere (the member loads
// themselves come from loadbalance.arrow).
func LoadWith(runDir string, progress func(stage string, done, total int)) (*Run, error) {
	meta, err := records.ReadRun(runDir)
	if err != nil {
		return nil, inRun(runDir, err)
	}
	l := &loader{dir: runDir, meta: meta, progress: progress, ids: map[string]NodeID{}, roles: newNodeRoles(meta.Topology)}
	info, err := runInfo(meta)
	if err != nil {
		return nil, inRun(runDir, err)
	}
	l.run = &Run{Dir: runDir, Info: info}
	steps := []struct {
		file     string
		optional bool
		read     func(string) error
	}{
		{records.PortsFile, false, l.ports},
		{records.LoadBalanceFile, false, l.loadBalance},
		{records.PFCFile, false, l.pfc},
		{records.DropsFile, false, l.drops},
		{records.TransportFile, true, l.transport},
		{records.FlowsFile, false, l.flows},
		{records.MessagesFile, true, l.messages},
		{records.DelayFile, false, l.delay},
		{records.StagesFile, true, l.stages},
		{records.BufferFile, false, l.buffer},
		{records.PacketsFile, true, l.packets},
	}
	for _, s := range steps {
		path := filepath.Join(runDir, s.file)
		if _, err := os.Stat(path); err != nil {
			_, listed := meta.Records[s.file]
			if s.optional && !listed && errors.Is(err, os.ErrNotExist) {
				continue
			}
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is named once, here
			}
			return nil, fmt.Errorf("%s: %w: a record file of the run is missing", path, err)
		}
		if err := s.read(path); err != nil {
			return nil, inRun(runDir, err)
		}
	}
	l.run.Roles = make([]Role, len(l.run.Nodes))
	for n := range l.run.Roles {
		l.run.Roles[n], _ = l.role(NodeID(n), l.tier[NodeID(n)])
	}
	l.run.Failures = failures(l.meta, l.dropWin, l.slowWin, l.run.Intervals)
	l.run.Events = l.meta.Events
	return l.run, nil
}

// inRun names the run directory in err unless err already names it (the records'
// errors name the file).
func inRun(runDir string, err error) error {
	if strings.Contains(err.Error(), runDir) {
		return err
	}
	return fmt.Errorf("run %s: %w", runDir, err)
}

func runInfo(m *records.Run) (RunInfo, error) {
	info := RunInfo{
		Version: m.Version, Seed: m.Seed, SimPs: m.Simulation.SimTimePs,
		Injected: m.Simulation.Injected, Delivered: m.Simulation.Delivered, Dropped: map[records.DropReason]int64{},
		LosslessDrops: m.Simulation.LosslessDrops, CEMarked: m.Simulation.CEMarked, PFCFrames: m.Simulation.PFCFrames,
		Undrained: m.Simulation.UndrainedTotal(), Complete: m.Complete,
		Transport: m.Transport, Options: m.Options, Command: m.Command, Config: m.Config, Topology: m.Topology,
		OfferedLoad: m.OfferedLoad, ClosedLoopFlows: m.ClosedLoop, HostMapping: m.HostMapping, Replication: m.Replication,
	}
	if h, err := m.HashMethod.MarshalText(); err == nil {
		info.Method = string(h)
	}
	for r, n := range m.Simulation.Dropped {
		info.Dropped[r] = n
	}
	var trace struct {
		Packets   int64     `json:"packets"`
		Flows     int64     `json:"flows"`
		IPv4      int64     `json:"ipv4_packets"`
		IPv6      int64     `json:"ipv6_packets"`
		IntraHost int64     `json:"intra_host"`
		IdleGaps  *IdleGaps `json:"idle_gaps"`
	}
	if len(m.Trace) > 0 && json.Unmarshal(m.Trace, &trace) == nil {
		info.TracePackets, info.TraceFlows = trace.Packets, trace.Flows
		info.TraceIPv4, info.TraceIPv6 = trace.IPv4, trace.IPv6
		info.IntraHost, info.IdleGaps = trace.IntraHost, trace.IdleGaps
	}
	ni, err := records.TraceNotInjected(m.Trace)
	if err != nil {
		return info, err
	}
	info.NotInjected = append([]records.NotInjected{}, ni...)
	var cfg struct {
		Switch struct {
			Mtu units.Bytes
		}
	}
	if len(m.Config) > 0 {
		if err := json.Unmarshal(m.Config, &cfg); err != nil {
			return info, fmt.Errorf("run.json config: %w", err)
		}
	}
	info.MTUBytes = int64(cfg.Switch.Mtu)
	return info, nil
}

// closedLoop returns what run.json says of a closed-loop run's transports.
func closedLoop(m *records.Run, simPs int64) (*ClosedLoop, error) {
	c := &ClosedLoop{Events: NewTransportEvents(simPs, TimeBins), ControlPackets: map[string]records.ControlCount{}, Replaced: map[string]int64{},
		Retransmits: m.Simulation.Retransmits, Timeouts: m.Simulation.Timeouts}
	for k, v := range m.Simulation.ControlPackets {
		c.ControlPackets[k.String()] = v
	}
	var trace struct {
		Replaced map[string]int64 `json:"replaced"`
	}
	if len(m.Trace) > 0 {
		if err := json.Unmarshal(m.Trace, &trace); err != nil {
			return nil, fmt.Errorf("run.json trace: %w", err)
		}
	}
	for k, v := range trace.Replaced {
		c.Replaced[k] = v
	}
	return c, nil
}

type portRef struct {
	port int32
	peer NodeID
}

type setKey struct {
	node NodeID
	set  int32
}

type loader struct {
	dir      string
	meta     *records.Run
	run      *Run
	progress func(stage string, done, total int)

	ids map[string]NodeID // node name -> id in run.Nodes

	adj      map[[2]NodeID]int32 // (node, peer) -> port
	neigh    map[NodeID][]NodeID // node -> peers, in port order
	tier     map[NodeID]records.Tier
	hostUp   map[NodeID]portRef // host -> its NIC port and rack
	setOf    map[NodeID]int     // switch -> index in run.Flows.Sets of its up set
	members  map[memberKey]portRef
	episodes bool
	roles    nodeRoles        // node roles of a topology file's run (docs/analysis.md#roles)
	roleByID []roleLevel      // l.roles by node id, filled on first use ("": not yet)
	flowIdx  map[int64]int32  // flows.arrow flow_id -> row, when stages.arrow needs it and the ids are not the rows
	dropWin  *windowCounter   // data drops around run.json's events (nil: none)
	slowWin  *slowdownWindows // message slowdowns around run.json's events (nil: none, or no messages.arrow)
}

// role returns node n's role and level (records tier t's without a topology file).
func (l *loader) role(n NodeID, t records.Tier) (Role, int) {
	for int(n) >= len(l.roleByID) {
		l.roleByID = append(l.roleByID, roleLevel{})
	}
	rl := &l.roleByID[n]
	if rl.role == "" {
		rl.role, rl.level = l.roles.of(l.run.Nodes.Name(n), t)
	}
	return rl.role, rl.level
}

type memberKey struct {
	node        NodeID
	set, member int32
}

// id returns a node name's id, adding it to run.Nodes when new. Each file's node
// dictionary goes through it once (remap); rows then carry ids.
func (l *loader) id(name string) NodeID {
	if i, ok := l.ids[name]; ok {
		return i
	}
	i := NodeID(len(l.run.Nodes))
	l.ids[name] = i
	l.run.Nodes = append(l.run.Nodes, name)
	return i
}

// remap returns the run's ids of a file's node dictionary.
func (l *loader) remap(nodes []string) []NodeID {
	m := make([]NodeID, len(nodes))
	for i, n := range nodes {
		m[i] = l.id(n)
	}
	return m
}

// stream reads every row of a record file, calling row for each, and checks the row
// count against run.json.
func stream[R any](l *loader, path string, open func(string) (*records.Reader[R], error), row func(r *R, nodes []NodeID) error) error {
	file := filepath.Base(path)
	rd, err := open(path)
	if err != nil {
		return err
	}
	defer rd.Close()
	want, listed := l.meta.Records[file]
	var (
		r     R
		n     int64
		nodes []NodeID
	)
	for rd.Next(&r) {
		if nodes == nil {
			nodes = l.remap(rd.Nodes())
		}
		if err := row(&r, nodes); err != nil {
			return fmt.Errorf("%s row %d: %w", file, n, err)
		}
		n++
		if l.progress != nil && n%65536 == 0 {
			l.progress(file, int(n), int(want))
		}
	}
	if err := rd.Err(); err != nil {
		return err
	}
	if listed && n != want {
		return fmt.Errorf("%w: %s has %d rows, run.json lists %d", ErrRecordsMismatch, file, n, want)
	}
	if l.progress != nil {
		l.progress(file, int(n), int(want))
	}
	return nil
}

func node(nodes []NodeID, i int32) (NodeID, error) {
	if i < 0 || int(i) >= len(nodes) {
		return 0, fmt.Errorf("node index %d outside the node dictionary of %d names", i, len(nodes))
	}
	return nodes[i], nil
}

// nodeAndPeer resolves a row's node and peer indices.
func nodeAndPeer(nodes []NodeID, n, p int32) (NodeID, NodeID, error) {
	a, err := node(nodes, n)
	if err != nil {
		return 0, 0, err
	}
	b, err := node(nodes, p)
	return a, b, err
}

func (l *loader) ports(path string) error {
	l.adj = map[[2]NodeID]int32{}
	l.neigh = map[NodeID][]NodeID{}
	l.tier = map[NodeID]records.Tier{}
	l.hostUp = map[NodeID]portRef{}
	return stream(l, path, records.OpenPorts, func(r *records.PortRow, nodes []NodeID) error {
		n, p, err := nodeAndPeer(nodes, r.Node, r.Peer)
		if err != nil {
			return err
		}
		l.tier[n] = r.Tier
		if _, ok := l.adj[[2]NodeID{n, p}]; !ok {
			l.adj[[2]NodeID{n, p}] = r.Port
			l.neigh[n] = append(l.neigh[n], p)
		}
		if r.Tier == records.TierHost {
			if _, ok := l.hostUp[n]; !ok {
				l.hostUp[n] = portRef{r.Port, p}
			}
		}
		role, _ := l.role(n, r.Tier)
		l.run.Queues = append(l.run.Queues, QueueCounters{PortClass: PortClass{n, r.Port, r.TC}, Tier: r.Tier, Role: role, Peer: p, TxPackets: r.TxPackets, TxBytes: r.TxBytes,
			ECNMarked: r.ECNMarked, WatermarkBytes: r.QueueWatermarkBytes})
		l.run.PortsPausedPs += r.PausedPs
		return nil
	})
}

func (l *loader) loadBalance(path string) error {
	type member struct {
		bytes, flows float64
	}
	type set struct {
		key     setKey
		tier    records.Tier
		members map[int32]member
	}
	var sets []*set
	index := map[setKey]*set{}
	l.members = map[memberKey]portRef{}
	method := ""
	err := stream(l, path, records.OpenLoadBalance, func(r *records.LoadBalanceRow, nodes []NodeID) error {
		n, p, err := nodeAndPeer(nodes, r.Node, r.Peer)
		if err != nil {
			return err
		}
		if r.Member < 0 || r.Member > 1<<16 {
			return fmt.Errorf("member %d of %s set %d out of range", r.Member, l.run.Nodes.Name(n), r.Set)
		}
		k := setKey{n, r.Set}
		s := index[k]
		if s == nil {
			s = &set{key: k, tier: r.Tier, members: map[int32]member{}}
			index[k] = s
			sets = append(sets, s)
		}
		m := s.members[r.Member]
		m.bytes += float64(r.Bytes)
		m.flows += float64(r.Flows)
		s.members[r.Member] = m
		l.members[memberKey{n, r.Set, r.Member}] = portRef{r.Port, p}
		if h, err := r.HashMethod.MarshalText(); err == nil && method == "" {
			method = string(h)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if l.run.Info.Method == "" {
		l.run.Info.Method = method
	}
	sort.SliceStable(sets, func(i, j int) bool {
		a, b := sets[i].key, sets[j].key
		if a.node != b.node {
			return l.run.Nodes[a.node] < l.run.Nodes[b.node]
		}
		return a.set < b.set
	})
	l.setOf = map[NodeID]int{}
	offset := 0
	for _, s := range sets {
		size := int32(0)
		for m := range s.members {
			size = max(size, m+1)
		}
		role, level := l.role(s.key.node, s.tier)
		sl := SetLoad{Node: s.key.node, Tier: s.tier, Role: role, Level: level, Set: int(s.key.set), Uplinks: true, Bytes: make([]float64, size), Flows: make([]float64, size)}
		for m, v := range s.members {
			sl.Bytes[m], sl.Flows[m] = v.bytes, v.flows
		}
		for m := range size {
			ref, ok := l.members[memberKey{s.key.node, s.key.set, m}]
			sl.Uplinks = sl.Uplinks && ok && l.tier[ref.peer] > s.tier
		}
		for _, w := range l.run.Info.Topology.WeightedSets {
			if NodeID(w.Node) == s.key.node && w.Set == s.key.set && len(w.Weights) == int(size) {
				total := 0
				for _, x := range w.Weights {
					total += x
				}
				sl.Shares = make([]float64, size)
				for m, x := range w.Weights {
					sl.Shares[m] = float64(x) / float64(total)
				}
			}
		}
		l.run.Sets = append(l.run.Sets, sl)
		if _, ok := l.setOf[s.key.node]; !ok {
			l.setOf[s.key.node] = len(l.run.Flows.Sets)
		}
		ft := &l.run.Flows
		ft.Sets = append(ft.Sets, SetDef{Node: sl.Node, Tier: sl.Tier, Role: sl.Role, Level: sl.Level, Set: sl.Set, Members: int(size), Offset: offset, Shares: sl.Shares})
		ft.CellBytes = append(ft.CellBytes, sl.Bytes...)
		ft.CellFlows = append(ft.CellFlows, sl.Flows...)
		offset += int(size)
	}
	return nil
}

func (l *loader) pfc(path string) error {
	var b PauseBuilder
	err := stream(l, path, records.OpenPFC, func(r *records.PFCRow, nodes []NodeID) error {
		n, p, err := nodeAndPeer(nodes, r.Node, r.Peer)
		if err != nil {
			return err
		}
		return b.Add(PFCEvent{TimePs: r.TimePs, Node: n, Port: r.Port, Peer: p, TC: r.TC, Kind: r.Event, Quanta: r.Quanta})
	})
	if err != nil {
		return err
	}
	ivs := b.Finish(l.run.Info.SimPs)
	for i := range ivs {
		if ivs[i].PeerPort < 0 {
			if port, ok := l.adj[[2]NodeID{ivs[i].Peer, ivs[i].Node}]; ok {
				ivs[i].PeerPort = port
			}
		}
	}
	l.run.Intervals = ivs
	l.run.PFCEvents = b.Events
	l.run.PFCIgnored = b.Ignored
	l.run.Episodes = Episodes(ivs, l.run.Nodes, DefaultStormDurationPs)
	l.episodes = len(l.run.Episodes) > 0
	return nil
}

func (l *loader) drops(path string) error {
	c := NewDropCounter(l.run.Nodes, l.run.Info.SimPs, TimeBins)
	if t := eventTimes(l.meta); t != nil {
		l.dropWin = newWindowCounter(t, EventWindowPs)
	}
	err := stream(l, path, records.OpenDrops, func(r *records.DropRow, nodes []NodeID) error {
		n, err := node(nodes, r.Node)
		if err != nil {
			return err
		}
		if r.Kind == records.KindData {
			l.dropWin.add(r.TimePs)
		}
		role, _ := l.role(n, r.Tier)
		c.Add(Drop{TimePs: r.TimePs, Node: n, Tier: r.Tier, Role: role, Port: r.Port, TC: r.TC, Reason: r.Reason, FlowID: r.FlowID, Bytes: int64(r.Bytes), Kind: r.Kind})
		return nil
	})
	l.run.Drops = c.Result()
	return err
}

// transport counts transport.arrow's events (a closed-loop run's).
func (l *loader) transport(path string) error {
	c, err := closedLoop(l.meta, l.run.Info.SimPs)
	if err != nil {
		return err
	}
	l.run.ClosedLoop = c
	return stream(l, path, records.OpenTransport, func(r *records.TransportRow, _ []NodeID) error {
		return c.Events.Add(r.TimePs, r.FlowID, r.Event, r.Value)
	})
}

// errOtherSet: a flow's member is outside its switch's up set in a run with events,
// which made the switch other sets (docs/analysis.md#failures-and-operations).
var errOtherSet = errors.New("member of a set an event made")

// cell returns the table cell of member m of switch sw's up set; -1 (no cell, no
// error) for member 0 of a switch with a single uplink, which flows.arrow records but
// loadbalance.arrow does not (nothing to balance).
func (l *loader) cell(sw NodeID, m int32) (int32, error) {
	si, ok := l.setOf[sw]
	if !ok {
		if m == 0 && len(l.uplinks(sw)) == 1 {
			return -1, nil
		}
		return -1, fmt.Errorf("%s has no equal-cost set in loadbalance.arrow", l.run.Nodes.Name(sw))
	}
	def := l.run.Flows.Sets[si]
	if int(m) >= def.Members && len(l.meta.Events) > 0 {
		return -1, errOtherSet
	}
	if int(m) >= def.Members {
		return -1, fmt.Errorf("member %d outside %s's set %d of %d members", m, l.run.Nodes.Name(def.Node), def.Set, def.Members)
	}
	return int32(def.Offset) + m, nil
}

// memberPeer returns the node that member m of switch sw's up set leads to: from
// loadbalance.arrow, or the switch's single uplink.
func (l *loader) memberPeer(sw NodeID, m int32) (NodeID, bool) {
	if si, ok := l.setOf[sw]; ok {
		ref, ok := l.members[memberKey{sw, int32(l.run.Flows.Sets[si].Set), m}]
		return ref.peer, ok
	}
	if up := l.uplinks(sw); m == 0 && len(up) == 1 {
		return up[0], true
	}
	return 0, false
}

// uplinks returns sw's neighbours one tier up (ports.arrow), in port order.
func (l *loader) uplinks(sw NodeID) []NodeID {
	var up []NodeID
	for _, nb := range l.neigh[sw] {
		if l.tier[nb] > l.tier[sw] {
			up = append(up, nb)
		}
	}
	return up
}

// messages reads messages.arrow: each message's size, slowdown and completion, with
// its flow's transport.
func (l *loader) messages(path string) error {
	ft := &l.run.Flows
	if want, ok := l.meta.Records[records.MessagesFile]; ok && want > 0 {
		l.run.Messages = make([]MessageSample, 0, want)
	}
	l.run.HasMessages = true
	if t := eventTimes(l.meta); t != nil {
		l.slowWin = newSlowdownWindows(t, EventWindowPs)
	}
	return stream(l, path, records.OpenMessages, func(r *records.MessageRow, _ []NodeID) error {
		if r.FlowID < 0 || r.FlowID >= int64(len(ft.Flows)) || r.SizeBytes < 0 || r.IdealFctPs < 0 ||
			r.Completion == records.CompletionComplete && r.FctPs < 0 {
			return fmt.Errorf("message %d of flow %d: flow of %d, size_bytes %d, fct_ps %d, ideal_fct_ps %d", r.Message, r.FlowID,
				len(ft.Flows), r.SizeBytes, r.FctPs, r.IdealFctPs)
		}
		l.run.Messages = append(l.run.Messages, MessageSample{SizeBytes: r.SizeBytes, Completion: r.Completion,
			Transport: ft.Flows[r.FlowID].Transport, Slowdown: SlowdownOf(r.Completion == records.CompletionComplete, r.FctPs, r.IdealFctPs)})
		if l.slowWin != nil && r.SizeBytes > 0 {
			m := &l.run.Messages[len(l.run.Messages)-1]
			v := m.Slowdown
			if r.Completion != records.CompletionComplete {
				v = math.Inf(1)
			}
			if !math.IsNaN(v) {
				l.slowWin.add(r.StartPs, v)
			}
		}
		return nil
	})
}

func (l *loader) flows(path string) error {
	top := NewTopFlows(MaxVictimIDs)
	var victims *VictimCounter
	if l.episodes {
		victims = NewVictimCounter(l.run.Episodes, l.run.Intervals, MaxVictimIDs)
	}
	ft := &l.run.Flows
	if want, ok := l.meta.Records[records.FlowsFile]; ok && want > 0 {
		ft.Flows = make([]FlowSample, 0, want)
	}
	tot := &l.run.FlowTotals
	cl := l.run.ClosedLoop
	fpTuple, fpStart, fpSize := fnv.New64a(), fnv.New64a(), fnv.New64a()
	var fbuf [64]byte
	var fp FlowPath
	path6 := make([]NodeID, 0, 8) // host, rack, [fabric, [spine, fabric], rack], host
	_, stagesFile := l.meta.Records[records.StagesFile]
	st := &ft.Stages
	if !stagesFile {
		st.Depth = 2 // rack_member and fabric_member as stages 1 and 2
	}
	var ids []int64 // flow ids in row order, for stages.arrow
	dense := true
	err := stream(l, path, records.OpenFlows, func(r *records.FlowRow, nodes []NodeID) error {
		src, err := node(nodes, r.SrcHost)
		if err != nil {
			return err
		}
		dst, err := node(nodes, r.DstHost)
		if err != nil {
			return err
		}
		f := FlowSample{FirstPs: r.FirstPs, RackCell: -1, FabricCell: -1, RackMember: r.RackMember, FabricMember: r.FabricMember, Moved: r.PathChanges > 0,
			Transport: r.Transport, Completion: r.Completion, SizeBytes: r.SizeBytes, Data: r.SizeBytes > 0 || r.IdealFctPs > 0,
			Slowdown: SlowdownOf(r.Completion == records.CompletionComplete, r.FctPs, r.IdealFctPs),
			Packets:  float64(r.Packets), Bytes: float64(r.Bytes), Dropped: float64(r.Dropped), Delivered: float64(r.Delivered),
			CE: float64(r.CEMarked), DelayMeanPs: float64(r.DelayMeanPs)}
		if r.SizeBytes < 0 || r.IdealFctPs < 0 || r.Completion == records.CompletionComplete && r.FctPs < 0 {
			return fmt.Errorf("flow %d: size_bytes %d, fct_ps %d, ideal_fct_ps %d", r.FlowID, r.SizeBytes, r.FctPs, r.IdealFctPs)
		}
		if cl != nil {
			cl.AddFlow(r.FlowID, r.Transport, r.CongestionSignals)
		}
		if r.RackMember < -1 || r.FabricMember < -1 || (r.RackMember < 0 && r.FabricMember >= 0) {
			return fmt.Errorf("flow %d: rack_member %d, fabric_member %d", r.FlowID, r.RackMember, r.FabricMember)
		}
		up, ok := l.hostUp[src]
		if !ok {
			return fmt.Errorf("flow %d: source host %s has no port in ports.arrow", r.FlowID, l.run.Nodes.Name(src))
		}
		rack := up.peer
		f.Rack = rack
		path6 = append(path6[:0], src, rack)
		resolved := true
		if stagesFile {
			dense = dense && r.FlowID == int64(len(ft.Flows))
			ids = append(ids, r.FlowID)
		} else {
			st.Member = append(st.Member, r.RackMember, -1)
			st.Node = append(st.Node, rack, -1)
		}
		otherSet := false // a member of a set an event made (cell reports it)
		if r.RackMember >= 0 {
			if f.RackCell, err = l.cell(rack, r.RackMember); errors.Is(err, errOtherSet) {
				otherSet = true
			} else if err != nil {
				return fmt.Errorf("flow %d: %w", r.FlowID, err)
			}
		}
		if r.RackMember >= 0 && !otherSet {
			fab, ok := l.memberPeer(rack, r.RackMember)
			if !ok {
				return fmt.Errorf("flow %d: %s has no member %d in loadbalance.arrow", r.FlowID, l.run.Nodes.Name(rack), r.RackMember)
			}
			path6 = append(path6, fab)
			if !stagesFile && r.FabricMember >= 0 {
				st.Member[len(st.Member)-1], st.Node[len(st.Node)-1] = r.FabricMember, fab
			}
			if r.FabricMember >= 0 {
				if f.FabricCell, err = l.cell(fab, r.FabricMember); errors.Is(err, errOtherSet) {
					otherSet = true
					if !stagesFile {
						st.Member[len(st.Member)-1], st.Node[len(st.Node)-1] = -1, -1
					}
				} else if err != nil {
					return fmt.Errorf("flow %d: %w", r.FlowID, err)
				}
				if l.episodes && !otherSet {
					spine, ok := l.memberPeer(fab, r.FabricMember)
					if !ok {
						return fmt.Errorf("flow %d: %s has no member %d in loadbalance.arrow", r.FlowID, l.run.Nodes.Name(fab), r.FabricMember)
					}
					dstUp, ok := l.hostUp[dst]
					resolved = resolved && ok
					down := NodeID(-1) // the destination pod's fabric switch: the spine's neighbour linked to the destination rack
					for _, nb := range l.neigh[spine] {
						if _, ok := l.adj[[2]NodeID{nb, dstUp.peer}]; ok {
							down = nb
							break
						}
					}
					resolved = resolved && down >= 0
					path6 = append(path6, spine, down)
				}
			}
			if l.episodes {
				dstUp, ok := l.hostUp[dst]
				resolved = resolved && ok
				path6 = append(path6, dstUp.peer)
			}
		}
		if otherSet {
			// Its member indexes a set the switch does not have in the table: the
			// flow counts at neither tier, and its path is not rebuilt.
			f.RackCell, f.FabricCell, f.RackMember, f.FabricMember = -1, -1, -1, -1
			if !stagesFile {
				st.Member[len(st.Member)-2], st.Node[len(st.Node)-2] = -1, -1
				st.Member[len(st.Member)-1], st.Node[len(st.Node)-1] = -1, -1
			}
			resolved = false
			l.run.OtherSetFlows++
		}
		path6 = append(path6, dst)
		ft.Flows = append(ft.Flows, f)

		binary.LittleEndian.PutUint64(fbuf[0:], uint64(r.FlowID))
		sa, da := r.Src.As16(), r.Dst.As16()
		copy(fbuf[8:24], sa[:])
		copy(fbuf[24:40], da[:])
		fbuf[40], fbuf[41] = byte(r.Src.Family()), byte(r.Dst.Family())
		binary.LittleEndian.PutUint16(fbuf[42:], r.Sport)
		binary.LittleEndian.PutUint16(fbuf[44:], r.Dport)
		fbuf[46] = r.Proto
		fpTuple.Write(fbuf[:47])
		binary.LittleEndian.PutUint64(fbuf[8:], uint64(r.FirstPs))
		fpStart.Write(fbuf[:16])
		binary.LittleEndian.PutUint64(fbuf[8:], uint64(r.SizeBytes))
		fpSize.Write(fbuf[:16])
		tot.Flows++
		tot.Packets += r.Packets
		tot.Bytes += r.Bytes
		tot.Delivered += r.Delivered
		tot.Dropped += r.Dropped
		tot.Undrained += r.Undrained
		tot.CEMarked += r.CEMarked
		if r.Dropped > 0 {
			top.Add(FlowDrops{FlowID: r.FlowID, Src: r.Src.String(), Dst: r.Dst.String(),
				Proto: r.Proto, Sport: r.Sport, Dport: r.Dport, TC: r.TC, Packets: r.Packets, Bytes: r.Bytes, Dropped: r.Dropped})
		}
		if victims == nil {
			return nil
		}
		fp.FlowID, fp.TC, fp.FirstPs, fp.LastPs = uint64(r.FlowID), r.TC, r.FirstPs, r.LastPs
		fp.Hops = fp.Hops[:0]
		for i := 0; resolved && i+1 < len(path6); i++ {
			a, b := path6[i], path6[i+1]
			port, ok := l.adj[[2]NodeID{a, b}]
			if !ok || a < 0 || b < 0 {
				resolved = false
				break
			}
			fp.Hops = append(fp.Hops, PortKey{a, port})
		}
		if !resolved {
			l.run.NoPathFlows++
			return nil
		}
		victims.Add(&fp)
		return nil
	})
	if err != nil {
		return err
	}
	ft.Fingerprint = FlowFingerprint{Tuple: fpTuple.Sum64(), Start: fpStart.Sum64(), Size: fpSize.Sum64()}
	l.run.TopFlows = top.Result()
	if victims != nil {
		l.run.VictimIDs = victims.IDs()
		l.run.Victims = victims
	}
	if stagesFile && !dense {
		l.flowIdx = make(map[int64]int32, len(ids))
		for i, id := range ids {
			l.flowIdx[id] = int32(i)
		}
	}
	return nil
}

// maxStages is the most ECMP stages a path has: a switch at each position of a
// packet's recorded path (MaxPath = 8 links) after the source host.
const maxStages = 7

// stages reads stages.arrow into the per-flow StageTable: each row is a flow's
// member at one stage of its path (docs/records.md#stagesarrow).
func (l *loader) stages(path string) error {
	ft := &l.run.Flows
	n := len(ft.Flows)
	st := newStageTable(n, maxStages, true)
	depth := 0
	err := stream(l, path, records.OpenStages, func(r *records.StageRow, nodes []NodeID) error {
		sw, err := node(nodes, r.Node)
		if err != nil {
			return err
		}
		i := int32(r.FlowID)
		if l.flowIdx != nil {
			var ok bool
			if i, ok = l.flowIdx[r.FlowID]; !ok {
				return fmt.Errorf("flow %d is not in flows.arrow", r.FlowID)
			}
		} else if r.FlowID < 0 || r.FlowID >= int64(n) {
			return fmt.Errorf("flow %d is not in flows.arrow (%d flows)", r.FlowID, n)
		}
		if r.Stage < 1 || r.Stage > maxStages || r.Member < 0 || r.Set < 0 {
			return fmt.Errorf("flow %d: stage %d, set %d, member %d out of range", r.FlowID, r.Stage, r.Set, r.Member)
		}
		k := int(r.Stage)
		if st.Member[int(i)*maxStages+k-1] >= 0 {
			return fmt.Errorf("flow %d: stage %d twice", r.FlowID, k)
		}
		st.set(int(i), k, sw, r.Member)
		depth = max(depth, k)
		return nil
	})
	if err != nil {
		return err
	}
	// Keep the stages the records reach.
	ft.Stages = newStageTable(n, depth, true)
	for i := range n {
		for k := 1; k <= depth; k++ {
			if m := st.Member[i*maxStages+k-1]; m >= 0 {
				ft.Stages.set(i, k, st.Node[i*maxStages+k-1], m)
			}
		}
	}
	return nil
}

func (l *loader) delay(path string) error {
	by := map[uint8][]DelayBucket{}
	err := stream(l, path, records.OpenDelay, func(r *records.DelayRow, _ []NodeID) error {
		if r.HiPs < r.LoPs || r.Packets < 0 {
			return fmt.Errorf("bucket [%d, %d) ps with %d packets", r.LoPs, r.HiPs, r.Packets)
		}
		by[r.TC] = append(by[r.TC], DelayBucket{units.Time(r.LoPs), units.Time(r.HiPs), r.Packets})
		return nil
	})
	tcs := make([]int, 0, len(by))
	for tc := range by {
		tcs = append(tcs, int(tc))
	}
	sort.Ints(tcs)
	for _, tc := range tcs {
		l.run.Delay = append(l.run.Delay, DelayClass{TC: uint8(tc), Buckets: sortBuckets(by[uint8(tc)])})
	}
	return err
}

func (l *loader) buffer(path string) error {
	type key struct {
		node NodeID
		pool uint8
	}
	series := map[key]*BufferSeries{}
	var order []key
	err := stream(l, path, records.OpenBuffer, func(r *records.BufferRow, nodes []NodeID) error {
		n, err := node(nodes, r.Node)
		if err != nil {
			return err
		}
		k := key{n, r.Pool}
		s := series[k]
		if s == nil {
			s = NewBufferSeries(n, r.Pool, l.run.Info.SimPs, TimeBins)
			series[k] = s
			order = append(order, k)
		}
		s.Add(r.TimePs, r.SharedBytes, r.HeadroomBytes, r.IngressBytes, r.EgressBytes)
		return nil
	})
	sort.Slice(order, func(i, j int) bool {
		if order[i].node != order[j].node {
			return l.run.Nodes[order[i].node] < l.run.Nodes[order[j].node]
		}
		return order[i].pool < order[j].pool
	})
	for _, k := range order {
		series[k].Finish()
		l.run.Buffer = append(l.run.Buffer, *series[k])
	}
	return err
}

func (l *loader) packets(path string) error {
	s := NewECNSeries(l.run.Info.SimPs, TimeBins)
	err := stream(l, path, records.OpenPackets, func(r *records.PacketRow, _ []NodeID) error {
		if r.Fate == records.FateDelivered {
			s.Add(r.DeliverPs, r.CE)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.Finish()
	l.run.ECNOverTime = s
	return nil
}
