package analysis

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"

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
// differs from run.json's (ErrRecordsMismatch). packets.arrow is optional (replay
// --record-packets). Every file is streamed once, in time linear in its rows; memory
// holds the ports, sets, pause intervals, the per-flow table (48 bytes a flow) and
// fixed-size aggregates, never the drops, events or packets themselves.
//
// Reconstruction rules: a host's rack is the peer of its NIC port in ports.arrow. A
// switch's equal-cost set for the per-flow table is its set in loadbalance.arrow (the
// lowest-numbered if it has several); a flow's fabric switch is the peer of its rack
// member, its spine the peer of its fabric member, and the destination pod's fabric
// switch the spine's neighbour linked to the destination rack. Flows record the members
// of their first packet, so under flowlet balancing later packets may have gone
// elsewhere.
func LoadWith(runDir string, progress func(stage string, done, total int)) (*Run, error) {
	meta, err := records.ReadRun(runDir)
	if err != nil {
		return nil, fmt.Errorf("analysis: run %s: %w", runDir, err)
	}
	l := &loader{dir: runDir, meta: meta, progress: progress, ids: map[string]int32{}}
	l.run = &Run{Dir: runDir, Info: runInfo(meta)}
	steps := []struct {
		file     string
		optional bool
		read     func(string) error
	}{
		{records.PortsFile, false, l.ports},
		{records.LoadBalanceFile, false, l.loadBalance},
		{records.PFCFile, false, l.pfc},
		{records.DropsFile, false, l.drops},
		{records.FlowsFile, false, l.flows},
		{records.DelayFile, false, l.delay},
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
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("analysis: run %s: record file %s is missing: %w", runDir, s.file, err)
			}
			return nil, fmt.Errorf("analysis: run %s: record file %s: %w", runDir, s.file, err)
		}
		if err := s.read(path); err != nil {
			return nil, fmt.Errorf("analysis: run %s: %w", runDir, err)
		}
	}
	return l.run, nil
}

func runInfo(m *records.Run) RunInfo {
	info := RunInfo{
		Version: m.Version, Seed: m.Seed, SimPs: m.Simulation.SimTimePs,
		Injected: m.Simulation.Injected, Delivered: m.Simulation.Delivered, Dropped: map[string]int64{},
		LosslessDrops: m.Simulation.LosslessDrops, CEMarked: m.Simulation.CEMarked, PFCFrames: m.Simulation.PFCFrames,
		Undrained: m.Simulation.UndrainedTotal(), Complete: m.Complete,
	}
	if h, err := m.HashMethod.MarshalText(); err == nil {
		info.Method = string(h)
	}
	for r, n := range m.Simulation.Dropped {
		info.Dropped[r.String()] = n
	}
	var trace struct {
		Packets int64 `json:"packets"`
		Flows   int64 `json:"flows"`
		IPv4    int64 `json:"ipv4_packets"`
		IPv6    int64 `json:"ipv6_packets"`
	}
	if len(m.Trace) > 0 && json.Unmarshal(m.Trace, &trace) == nil {
		info.TracePackets, info.TraceFlows = trace.Packets, trace.Flows
		info.TraceIPv4, info.TraceIPv6 = trace.IPv4, trace.IPv6
	}
	return info
}

type portRef struct {
	port int32
	peer int32
}

type setKey struct {
	node int32
	set  int32
}

type loader struct {
	dir      string
	meta     *records.Run
	run      *Run
	progress func(stage string, done, total int)

	names []string         // global node names
	ids   map[string]int32 // name -> global id
	tier  []string         // per global node id ("" unknown)

	adj      map[[2]int32]int32 // (node, peer) -> port
	neigh    map[int32][]int32  // node -> peers
	hostUp   map[int32]portRef  // host -> its NIC port and rack
	setOf    map[int32]int      // switch -> index in run.Flows.Sets of its up set
	members  map[[3]int32]portRef
	episodes bool
}

// id interns a node name.
func (l *loader) id(name string) int32 {
	if i, ok := l.ids[name]; ok {
		return i
	}
	i := int32(len(l.names))
	l.ids[name] = i
	l.names = append(l.names, name)
	l.tier = append(l.tier, "")
	return i
}

// remap returns the global ids of a file's node dictionary.
func (l *loader) remap(nodes []string) []int32 {
	m := make([]int32, len(nodes))
	for i, n := range nodes {
		m[i] = l.id(n)
	}
	return m
}

// stream reads every row of a record file, calling row for each, and checks the row
// count against run.json.
func stream[R any](l *loader, path string, open func(string) (*records.Reader[R], error), row func(r *R, nodes []int32) error) error {
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
		nodes []int32
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

func node(nodes []int32, i int32) (int32, error) {
	if i < 0 || int(i) >= len(nodes) {
		return 0, fmt.Errorf("node index %d outside the node dictionary of %d names", i, len(nodes))
	}
	return nodes[i], nil
}

// nodeAndPeer resolves a row's node and peer indices.
func nodeAndPeer(nodes []int32, n, p int32) (int32, int32, error) {
	a, err := node(nodes, n)
	if err != nil {
		return 0, 0, err
	}
	b, err := node(nodes, p)
	return a, b, err
}

func (l *loader) ports(path string) error {
	l.adj = map[[2]int32]int32{}
	l.neigh = map[int32][]int32{}
	l.hostUp = map[int32]portRef{}
	return stream(l, path, records.OpenPorts, func(r *records.PortRow, nodes []int32) error {
		n, p, err := nodeAndPeer(nodes, r.Node, r.Peer)
		if err != nil {
			return err
		}
		tier := r.Tier.String()
		l.tier[n] = tier
		if _, ok := l.adj[[2]int32{n, p}]; !ok {
			l.adj[[2]int32{n, p}] = r.Port
			l.neigh[n] = append(l.neigh[n], p)
		}
		if r.Tier == records.TierHost {
			if _, ok := l.hostUp[n]; !ok {
				l.hostUp[n] = portRef{r.Port, p}
			}
		}
		l.run.Queues = append(l.run.Queues, QueueCounters{PortClass: PortClass{l.names[n], r.Port, r.TC}, Tier: tier, TxPackets: r.TxPackets, ECNMarked: r.ECNMarked})
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
		tier    string
		members map[int32]member
	}
	var sets []*set
	index := map[setKey]*set{}
	l.members = map[[3]int32]portRef{}
	method := ""
	err := stream(l, path, records.OpenLoadBalance, func(r *records.LoadBalanceRow, nodes []int32) error {
		n, p, err := nodeAndPeer(nodes, r.Node, r.Peer)
		if err != nil {
			return err
		}
		if r.Member < 0 || r.Member > 1<<16 {
			return fmt.Errorf("member %d of %s set %d out of range", r.Member, l.names[n], r.Set)
		}
		k := setKey{n, r.Set}
		s := index[k]
		if s == nil {
			s = &set{key: k, tier: r.Tier.String(), members: map[int32]member{}}
			index[k] = s
			sets = append(sets, s)
		}
		m := s.members[r.Member]
		m.bytes += float64(r.Bytes)
		m.flows += float64(r.Flows)
		s.members[r.Member] = m
		l.members[[3]int32{n, r.Set, r.Member}] = portRef{r.Port, p}
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
			return l.names[a.node] < l.names[b.node]
		}
		return a.set < b.set
	})
	l.setOf = map[int32]int{}
	offset := 0
	for _, s := range sets {
		size := int32(0)
		for m := range s.members {
			size = max(size, m+1)
		}
		sl := SetLoad{Node: l.names[s.key.node], Tier: s.tier, Set: int(s.key.set), Bytes: make([]float64, size), Flows: make([]float64, size)}
		for m, v := range s.members {
			sl.Bytes[m], sl.Flows[m] = v.bytes, v.flows
		}
		l.run.Sets = append(l.run.Sets, sl)
		if _, ok := l.setOf[s.key.node]; !ok {
			l.setOf[s.key.node] = len(l.run.Flows.Sets)
		}
		l.run.Flows.Sets = append(l.run.Flows.Sets, SetDef{Node: sl.Node, Tier: sl.Tier, Set: sl.Set, Members: int(size), Offset: offset})
		offset += int(size)
	}
	return nil
}

func (l *loader) pfc(path string) error {
	var b PauseBuilder
	err := stream(l, path, records.OpenPFC, func(r *records.PFCRow, nodes []int32) error {
		n, p, err := nodeAndPeer(nodes, r.Node, r.Peer)
		if err != nil {
			return err
		}
		return b.Add(PFCEvent{TimePs: r.TimePs, Node: l.names[n], Port: r.Port, Peer: l.names[p], TC: r.TC, Kind: r.Event, Quanta: r.Quanta})
	})
	if err != nil {
		return err
	}
	ivs := b.Finish(l.run.Info.SimPs)
	for i := range ivs {
		if ivs[i].PeerPort < 0 {
			if port, ok := l.adj[[2]int32{l.ids[ivs[i].Peer], l.ids[ivs[i].Node]}]; ok {
				ivs[i].PeerPort = port
			}
		}
	}
	l.run.Intervals = ivs
	l.run.PFCEvents = b.Events
	l.run.PFCIgnored = b.Ignored
	l.run.Episodes = Episodes(ivs, DefaultStormDurationPs)
	l.episodes = len(l.run.Episodes) > 0
	return nil
}

func (l *loader) drops(path string) error {
	c := NewDropCounter(l.run.Info.SimPs, TimeBins)
	err := stream(l, path, records.OpenDrops, func(r *records.DropRow, nodes []int32) error {
		n, err := node(nodes, r.Node)
		if err != nil {
			return err
		}
		c.Add(Drop{TimePs: r.TimePs, Node: l.names[n], Tier: r.Tier.String(), Port: r.Port, TC: r.TC, Reason: r.Reason.String(), FlowID: r.FlowID, Bytes: int64(r.Bytes)})
		return nil
	})
	l.run.Drops = c.Result()
	return err
}

// upSet returns the table set of a switch and the cell of member m in it.
func (l *loader) cell(sw int32, m int32) (int32, int, error) {
	si, ok := l.setOf[sw]
	if !ok {
		return -1, 0, fmt.Errorf("%s has no equal-cost set in loadbalance.arrow", l.names[sw])
	}
	def := l.run.Flows.Sets[si]
	if int(m) >= def.Members {
		return -1, 0, fmt.Errorf("member %d outside %s's set %d of %d members", m, def.Node, def.Set, def.Members)
	}
	return int32(def.Offset) + m, si, nil
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
	fprint := fnv.New64a()
	var fbuf [24]byte
	var fp FlowPath
	var pathNodes [8]int32
	err := stream(l, path, records.OpenFlows, func(r *records.FlowRow, nodes []int32) error {
		src, err := node(nodes, r.SrcHost)
		if err != nil {
			return err
		}
		dst, err := node(nodes, r.DstHost)
		if err != nil {
			return err
		}
		f := FlowSample{RackCell: -1, FabricCell: -1, RackMember: r.RackMember, FabricMember: r.FabricMember,
			Bytes: float64(r.Bytes), Dropped: float64(r.Dropped), Delivered: float64(r.Delivered), DelayMeanPs: float64(r.DelayMeanPs)}
		if r.RackMember < -1 || r.FabricMember < -1 || (r.RackMember < 0 && r.FabricMember >= 0) {
			return fmt.Errorf("flow %d: rack_member %d, fabric_member %d", r.FlowID, r.RackMember, r.FabricMember)
		}
		// Path: host, rack, [fabric, [spine, fabric], rack], host.
		np := 0
		pathNodes[np] = src
		np++
		up, ok := l.hostUp[src]
		if !ok {
			return fmt.Errorf("flow %d: source host %s has no port in ports.arrow", r.FlowID, l.names[src])
		}
		rack := up.peer
		pathNodes[np] = rack
		np++
		resolved := true
		if r.RackMember >= 0 {
			c, _, err := l.cell(rack, r.RackMember)
			if err != nil {
				return fmt.Errorf("flow %d: %w", r.FlowID, err)
			}
			f.RackCell = c
			fab, ok := l.memberPeer(rack, r.RackMember)
			if !ok {
				return fmt.Errorf("flow %d: %s has no member %d in loadbalance.arrow", r.FlowID, l.names[rack], r.RackMember)
			}
			pathNodes[np] = fab
			np++
			if r.FabricMember >= 0 {
				c, _, err := l.cell(fab, r.FabricMember)
				if err != nil {
					return fmt.Errorf("flow %d: %w", r.FlowID, err)
				}
				f.FabricCell = c
				if l.episodes {
					spine, ok := l.memberPeer(fab, r.FabricMember)
					if !ok {
						return fmt.Errorf("flow %d: %s has no member %d in loadbalance.arrow", r.FlowID, l.names[fab], r.FabricMember)
					}
					pathNodes[np] = spine
					np++
					dstUp, ok := l.hostUp[dst]
					resolved = resolved && ok
					dstRack := dstUp.peer
					down := int32(-1)
					for _, nb := range l.neigh[spine] {
						if _, ok := l.adj[[2]int32{nb, dstRack}]; ok {
							down = nb
							break
						}
					}
					if down < 0 {
						resolved = false
					}
					pathNodes[np] = down
					np++
				}
			}
			if l.episodes {
				dstUp, ok := l.hostUp[dst]
				resolved = resolved && ok
				pathNodes[np] = dstUp.peer
				np++
			}
		}
		pathNodes[np] = dst
		np++
		ft.Flows = append(ft.Flows, f)

		binary.LittleEndian.PutUint64(fbuf[0:], uint64(r.FlowID))
		binary.LittleEndian.PutUint64(fbuf[8:], uint64(r.Packets))
		binary.LittleEndian.PutUint64(fbuf[16:], uint64(r.Bytes))
		fprint.Write(fbuf[:])
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
		for i := 0; resolved && i+1 < np; i++ {
			a, b := pathNodes[i], pathNodes[i+1]
			port, ok := l.adj[[2]int32{a, b}]
			if !ok || a < 0 || b < 0 {
				resolved = false
				break
			}
			fp.Hops = append(fp.Hops, PortKey{l.names[a], port})
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
	ft.Fingerprint = fprint.Sum64()
	l.run.TopFlows = top.Result()
	if victims != nil {
		l.run.VictimIDs = victims.IDs()
		l.run.Victims = victims
	}
	return nil
}

// memberPeer returns the node that member m of switch sw's table set leads to.
func (l *loader) memberPeer(sw, m int32) (int32, bool) {
	si, ok := l.setOf[sw]
	if !ok {
		return 0, false
	}
	ref, ok := l.members[[3]int32{sw, int32(l.run.Flows.Sets[si].Set), m}]
	return ref.peer, ok
}

func (l *loader) delay(path string) error {
	by := map[uint8][]DelayBucket{}
	err := stream(l, path, records.OpenDelay, func(r *records.DelayRow, _ []int32) error {
		if r.HiPs < r.LoPs || r.Packets < 0 {
			return fmt.Errorf("bucket [%d, %d) ps with %d packets", r.LoPs, r.HiPs, r.Packets)
		}
		by[r.TC] = append(by[r.TC], DelayBucket{r.LoPs, r.HiPs, r.Packets})
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
		node int32
		pool uint8
	}
	series := map[key]*BufferSeries{}
	var order []key
	err := stream(l, path, records.OpenBuffer, func(r *records.BufferRow, nodes []int32) error {
		n, err := node(nodes, r.Node)
		if err != nil {
			return err
		}
		k := key{n, r.Pool}
		s := series[k]
		if s == nil {
			s = NewBufferSeries(l.names[n], r.Pool, l.run.Info.SimPs, TimeBins)
			series[k] = s
			order = append(order, k)
		}
		s.Add(r.TimePs, r.SharedBytes, r.HeadroomBytes, r.IngressBytes, r.EgressBytes)
		return nil
	})
	sort.Slice(order, func(i, j int) bool {
		if order[i].node != order[j].node {
			return l.names[order[i].node] < l.names[order[j].node]
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
	err := stream(l, path, records.OpenPackets, func(r *records.PacketRow, _ []int32) error {
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
