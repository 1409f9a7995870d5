package replay

import (
	"fmt"
	"runtime"
	"time"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/transport"
	"golang.org/x/sys/unix"
)

// Run replays the prepared trace with the configured hash method (or method, when
// not "") and writes the records and run.json into outDir, atomically. It returns
// the run.json it wrote.
func (pr *Prepared) Run(outDir, method string) (*records.Run, error) {
	return pr.RunThreads(outDir, method, pr.Opt.Threads)
}

// RunThreads is Run with threads in place of Opt.Threads (0 or 1: the sequential
// engine): several runs of one Prepared at once (--hash all) share the threads.
func (pr *Prepared) RunThreads(outDir, method string, threads int) (*records.Run, error) {
	cfg, err := methodConfig(pr.Opt.Config, method)
	if err != nil {
		return nil, err
	}
	out, err := records.CreateOutputDir(outDir)
	if err != nil {
		return nil, inputErrf("%w", err)
	}
	s, err := newSim(pr, cfg, out)
	if err == nil {
		s.askThreads = threads
		err = s.run()
	}
	if cerr := s.close(); err == nil {
		err = cerr
	}
	if seq, ok := err.(errSequential); ok {
		// The partitioned engine met what it does not handle yet: the run again, on
		// the sequential engine (its records are the same, only later).
		out.Abort()
		if out, err = records.CreateOutputDir(outDir); err != nil {
			return nil, inputErrf("%w", err)
		}
		s, err = newSim(pr, cfg, out)
		if err == nil {
			s.askThreads = threads
			s.threads.Reason = seq.reason
			s.noThreads = true
			err = s.run()
		}
		if cerr := s.close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		out.Abort()
		return nil, err
	}
	run, err := s.runJSON()
	if err != nil {
		out.Abort()
		return nil, err
	}
	if t := &s.trace; t.replayed > 0 && t.intraHost == t.replayed && pr.Opt.Warn != nil {
		pr.intraOnce.Do(func() {
			pr.Opt.Warn(fmt.Sprintf("--hosts %s maps both ends of every one of the %d replayed packets to one host: nothing entered the fabric; "+
				"map the endpoints onto distinct hosts (--hosts spread, --hosts subnet, or another CSV file)", pr.HostMap.Mode, t.replayed))
		})
	}
	if err := out.Commit(run); err != nil {
		return nil, err
	}
	return run, nil
}

// sim is one simulation run: the network, the injector and the record writers.
type sim struct {
	pr  *Prepared
	cfg *config.Config
	// classes is the host NICs' classification, the base Switch: map
	// (docs/model.md#classification): a flow's class in flows.arrow, an oversize
	// drop's at its source NIC.
	classes config.ClassMap
	eng     *switchmodel.Engine
	net     *switchmodel.Network
	hid     switchmodel.HandlerID
	tier    []records.Tier // per node

	// injector
	feed          arrivals
	next          *arrival // the packet to inject next; nil after the last
	readErr       error
	lastInj       units.Time
	doneInjecting bool
	mtu           int32
	trace         traceCounts
	load          *offeredLoad // the host links' offered load, filled by the feed

	flows        []flowState
	undrained    map[int32]int64               // data packets left at the end, by node
	ctlUndrained [switchmodel.NumClasses]int64 // control packets left at the end
	retransmits  int64                         // closed loop: the sums of flows.arrow's retransmits and timeouts
	timeouts     int64
	layer        *transport.Layer // closed loop: the hosts' senders and receivers
	ideal        idealPaths       // the ideal schedule's paths (ideal.go)
	msgGap       units.Time       // Transport.MessageGap, resolved
	causal       bool             // Transport.Causality request in a closed-loop run
	byTuple      map[ingest.FiveTuple]int32
	msgs         [][]message          // per flow, its unsettled messages, oldest first (messages.go)
	lastSender   []int32              // per connection (flowState.pair), the flow that sent its latest data, -1 none
	held         map[int32]*heldQueue // causality: per flow, its held arrivals
	msgRow       records.MessageRow
	delay        records.DelayHistogram
	oversizeAt   [][switchmodel.NumTC]int64 // oversize drops per source host and TC

	ev *eventRunner // nil without Events
	// storms are the PFC watchdog's storms (run.json pfc_watchdog), open ones by
	// (node, port, tc).
	storms    []records.Storm
	openStorm map[[3]int32]int

	w       *records.WriterSet
	drops   *records.DropsWriter
	pfc     *records.PFCWriter
	buffer  *records.BufferWriter
	packets *records.PacketsWriter // nil without --record-packets
	stages  *records.StagesWriter  // nil unless the fabric has stages beyond rack and fabric (Topology.RecordsStages)
	obsErr  error

	dropRow records.DropRow
	pfcRow  records.PFCRow
	bufRow  records.BufferRow
	pktRow  records.PacketRow
	trRow   records.TransportRow
	hops    []switchmodel.Hop

	// stages.arrow (stages.go): per flow the stages read so far, the switch of each
	// node id (nil for hosts), the row.
	stageSeen []uint8
	switchAt  []*switchmodel.Switch
	stageRow  records.StageRow

	// The parallel engine (parallel.go): threads is run.json's record of it; par the
	// partitioned run's feed (nil: sequential); noThreads: run sequentially whatever
	// was asked (a partitioned attempt gave up).
	threads   records.Threads
	par       *parFeed
	parStats  switchmodel.ParallelStats
	noThreads bool
	// askThreads is the threads the run may use (RunThreads).
	askThreads int
	retry      bool // the partitioned run gave up (errSequential): its output is abandoned

	wallStart time.Time
	cpu       time.Duration // the simulation thread's CPU time
	wall      time.Duration
	rows      map[string]int64
}

func newSim(pr *Prepared, cfg *config.Config, out *records.OutputDir) (*sim, error) {
	s := &sim{pr: pr, cfg: cfg, classes: cfg.Switch.ClassMap(), mtu: int32(cfg.Switch.Mtu), rows: map[string]int64{}}
	s.trace.closed = pr.closedLoop()
	s.msgGap = cfg.MessageGap()
	s.causal = s.trace.closed && cfg.Transport.Causality == config.CausalityRequest
	names := make([]string, len(pr.Topo.Nodes))
	for i, n := range pr.Topo.Nodes {
		names[i] = n.Name
		s.tier = append(s.tier, RecordTier(n.Tier))
	}
	w, err := records.NewWriterSet(out.Dir(), records.Dictionaries{Nodes: names}, pr.Opt.RecordPackets)
	if err != nil {
		return s, err
	}
	s.w, s.drops, s.pfc, s.buffer, s.packets = w, w.Drops, w.PFC, w.Buffer, w.Packets
	if pr.closedLoop() {
		if err := w.AddTransport(out.Dir(), records.Dictionaries{Nodes: names}); err != nil {
			return s, err
		}
	}
	if pr.Topo.RecordsStages() {
		if err := w.AddStages(out.Dir(), records.Dictionaries{Nodes: names}); err != nil {
			return s, err
		}
		s.stages = w.Stages
	}
	if s.packets != nil {
		s.pktRow.Path = make([]int32, 0, switchmodel.MaxPath+1)
	}
	// The flows' state, sized once: at most the capture's unicast flows, once per
	// copy (intra-host flows have none).
	if n := pr.Summary.UnicastFlows * int64(max(1, pr.repl.count())); n > 0 && n <= 1<<22 {
		s.flows = make([]flowState, 0, n)
		s.msgs = make([][]message, 0, n)
		s.lastSender = make([]int32, 0, n)
		s.byTuple = make(map[ingest.FiveTuple]int32, n)
	}
	s.eng = switchmodel.NewEngine()
	_, bdp := pr.Topo.BaseRTT(cfg)
	s.net = switchmodel.NewNetwork(s.eng, switchmodel.Options{
		Seed:        cfg.Seed,
		FabricBDP:   bdp,
		Observers:   switchmodel.Observers{Drops: s, PFC: s, Buffer: s, Deliveries: s},
		HostClasses: &s.classes,
	})
	if err := s.build(); err != nil {
		return s, err
	}
	s.hid = s.eng.RegisterShared(s)
	if len(cfg.Events) > 0 {
		plan, err := planEvents(pr.Topo, cfg, pr.Opt.Speedup)
		if err != nil {
			return s, err
		}
		s.ev = newEventRunner(s, plan)
	}
	return s, nil
}

// run streams the trace into the network and simulates until drained or the drain
// limit.
func (s *sim) run() error {
	opt := &s.pr.Opt
	var loaded chan *offeredLoad
	if c := s.pr.cache; c != nil {
		// From memory, prepared a batch ahead on a goroutine of its own; the offered
		// load is the cache's, accounted beside the simulation (the run's own loop
		// only injects).
		s.feed = newCacheBatches(newCacheFeed(s.pr))
		loaded = make(chan *offeredLoad, 1)
		go func() { loaded <- s.pr.evalLoad(c, opt.Speedup) }()
		defer func() { s.load = <-loaded }()
	} else {
		s.load = s.pr.newLoad()
		r, err := openTrace(s.pr)
		if err != nil {
			return err
		}
		f, err := newFeed(s.pr, r, s.load)
		if err != nil {
			r.Close()
			return err
		}
		s.feed = f
	}
	asked := max(1, s.askThreads)
	if s.noThreads {
		asked = 1
	}
	plan, th := s.planThreads(asked)
	if s.noThreads {
		th.Asked, th.Reason = s.askThreads, s.threads.Reason
	}
	s.threads = th
	// The sequential simulation loop runs on this goroutine alone: pinned to its
	// thread, the thread's CPU time is the loop's (run.json cpu_s), whatever else the
	// machine runs. A partitioned run is not pinned (the partitions yield to each
	// other at barriers, which a locked thread makes costly): its CPU time is the
	// process's.
	clock := threadCPU
	if plan != nil {
		clock = processCPU
	} else {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	cpu0 := clock()
	s.wallStart = time.Now()
	s.advance()
	if plan != nil && s.next != nil {
		s.par = newParFeed(s, plan)
		if err := s.runParallel(plan); err != nil {
			return err
		}
	} else {
		if s.next != nil {
			s.eng.ScheduleInjection(s.next.at, 0, s.hid, 0, 0)
		}
		// Run until the injector has fed the last packet (it stops the engine then),
		// then drain until the network is empty or MaxDrain has passed since.
		s.eng.Run()
		if s.doneInjecting && s.readErr == nil && s.obsErr == nil {
			s.net.Drain(s.lastInj + opt.MaxDrain)
		}
	}
	if s.readErr != nil {
		if interrupted(s.readErr) {
			return s.readErr
		}
		return inputErrf("%w", s.readErr)
	}
	if s.obsErr != nil {
		return s.obsErr
	}
	if s.ev != nil {
		s.ev.closeAfter(s.eng.Now())
	}
	s.wall = time.Since(s.wallStart)
	s.cpu = clock() - cpu0
	s.progress(true)
	return nil
}

// openTrace opens pr's capture files for the run pass.
func openTrace(pr *Prepared) (*ingest.Reader, error) {
	iopt := pr.Opt.ingestOptions()
	iopt.Warn = nil // Prepare reported them
	iopt.InOrder = pr.Summary.InOrderFiles()
	r, err := ingest.Open(pr.Opt.Traces, iopt)
	if err != nil {
		return nil, inputErrf("%w", err)
	}
	return r, nil
}

// advance takes the next arrival from the feed into s.next.
func (s *sim) advance() {
	a, err := s.feed.Next()
	if err != nil {
		s.readErr = err
		s.eng.Stop()
	}
	s.next = a
}

// Handle is the injector's event: inject s.next, take the following packet and
// schedule it; after the last one, stop the engine so run can start the drain.
func (s *sim) Handle(now units.Time, kind int32, arg int64) {
	if kind == evRelease {
		// A release is its flow's source host's (docs/model.md#event-order-and-determinism).
		s.eng.ActAs(s.net.Hosts()[s.flows[arg].src].ID())
		if q := s.held[int32(arg)]; q != nil && q.event == now {
			q.event = -1
			s.release(int32(arg))
		}
		return
	}
	// The feed acts as the host it injects at; the next arrival's index in the
	// injection class is its position in the feed (copies included).
	s.eng.ActAs(s.net.Hosts()[s.next.src].ID())
	s.inject(now, s.next)
	s.trace.arrivals++
	if s.next.copy == 0 {
		s.trace.replayed++
	}
	if s.trace.replayed&0xffff == 0 {
		s.progress(false)
	}
	s.advance()
	if s.next != nil {
		s.eng.ScheduleInjection(s.next.at, uint64(s.trace.arrivals), s.hid, 0, 0)
	} else if s.readErr == nil {
		s.lastInj = now
		s.doneInjecting = true
		s.eng.Stop()
	}
}

func (s *sim) progress(done bool) {
	if s.pr.Opt.Progress == nil {
		return
	}
	s.pr.Opt.Progress(Progress{Method: s.cfg.Switch.EcmpHashMethod.String(), Injected: s.trace.replayed,
		Total: s.pr.Summary.Unicast, SimTime: s.eng.Now(), Done: done})
}

// processCPU is the process's user and system CPU time (0 where unavailable).
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadCPU is the calling thread's CPU time (0 where the clock is unavailable).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
