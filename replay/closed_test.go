package replay

import (
	"cmp"
	"encoding/json"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// closedOpts makes a run closed loop.
func closedOpts(o *Options) {
	c := config.Default()
	c.Transport.Mode = config.TransportClosed
	o.Config = &c
}

func readFlows(t *testing.T, dir string) []records.FlowRow {
	t.Helper()
	r, err := records.OpenFlows(filepath.Join(dir, records.FlowsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []records.FlowRow
	var row records.FlowRow
	for r.Next(&row) {
		out = append(out, row)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func readPackets(t *testing.T, dir string) []records.PacketRow {
	t.Helper()
	r, err := records.OpenPackets(filepath.Join(dir, records.PacketsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []records.PacketRow
	var row records.PacketRow
	for r.Next(&row) {
		row.Path = append([]int32(nil), row.Path...)
		out = append(out, row)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// In an empty fabric a short TCP flow (within the initial window) and a RoCEv2 flow
// (DCQCN starts at line rate) are never held back by their senders: closed-loop
// delivery times equal open loop's to the picosecond. The TCP flows, one IPv4 and one
// IPv6 (its data and ACKs hashed with 37-byte keys, its SMSS from the IPv6 payload),
// have captured pure ACKs going back, which closed loop replaces by its receiver's
// own.
func TestClosedLoopEqualsOpenLoopWhenEmpty(t *testing.T) {
	var pkts []tracegen.Packet
	a, b := addr("10.0.0.1"), addr("10.1.2.1")
	c, d := addr("10.0.1.1"), addr("10.1.3.1")
	e, f := addr("fd00:0:0:2::1"), addr("fd00:0:1:1::1")
	for _, fl := range []struct {
		src, dst netip.Addr
		hdr      int // IP + TCP header bytes: a pure ACK's size
	}{{a, b, 40}, {e, f, 60}} {
		for i := 0; i < 8; i++ { // 8 TCP segments, some back to back, some spaced
			at := units.Time(i/2) * 5 * units.Microsecond
			pkts = append(pkts, tracegen.Packet{Time: at + units.Time(i%2), Src: fl.src, Dst: fl.dst, Proto: layers.IPProtocolTCP,
				SrcPort: 40000, DstPort: 80, ECN: tracegen.ECT0, Length: 1500, Seq: uint32(i * (1500 - fl.hdr))})
			pkts = append(pkts, tracegen.Packet{Time: at + 2*units.Microsecond, Src: fl.dst, Dst: fl.src, Proto: layers.IPProtocolTCP,
				SrcPort: 80, DstPort: 40000, Length: fl.hdr, TCPFlags: tracegen.TCPAck})
		}
	}
	for i := 0; i < 30; i++ { // a RoCE burst: 30 packets captured 200 ns apart
		pkts = append(pkts, tracegen.Packet{Time: 1*units.Microsecond + units.Time(i)*200*units.Nanosecond, Src: c, Dst: d,
			Proto: layers.IPProtocolUDP, SrcPort: 50000, DstPort: 4791, DSCP: 26, ECN: tracegen.ECT0, Length: 4140})
	}
	sortPackets(pkts)
	trace := writeTrace(t, pkts)
	deliveries := func(closed bool) map[int64]int64 {
		opt := func(o *Options) {
			o.RecordPackets = true
			if closed {
				closedOpts(o)
			}
		}
		run, dir := runTraceAbs(t, trace, opt)
		if closed && (run.Transport != "closed" || run.Simulation.ControlPackets[records.KindAck].Generated != 46) {
			t.Errorf("closed run: transport %q, control %v", run.Transport, run.Simulation.ControlPackets)
		}
		if closed {
			seen := 0
			for _, fl := range readFlows(t, dir) {
				if !fl.Src.Is6() || fl.Dport != 80 { // the IPv6 data direction (its ACKs are a flow with no data)
					continue
				}
				seen++
				if fl.Transport != records.TransportDCTCP || fl.SizeBytes != 8*1500 || fl.Completion != records.CompletionComplete {
					t.Errorf("IPv6 TCP flow: %v, %d bytes, %v; want dctcp, 12000, complete", fl.Transport, fl.SizeBytes, fl.Completion)
				}
			}
			if seen != 1 {
				t.Errorf("%d IPv6 data flows, want 1", seen)
			}
		}
		out := map[int64]int64{}
		for _, p := range readPackets(t, dir) {
			out[p.TraceIndex] = p.DeliverPs
		}
		return out
	}
	open, closed := deliveries(false), deliveries(true)
	if len(open) != 62 || len(closed) != 46 { // 2 x (8 + 8 ACKs) + 30 open; 2 x 8 + 30 closed
		t.Fatalf("%d open and %d closed deliveries", len(open), len(closed))
	}
	for ti, at := range closed {
		if open[ti] != at || at <= 0 {
			t.Errorf("trace packet %d delivered at %d ps closed loop, %d ps open loop", ti, at, open[ti])
		}
	}
}

// Every committed trace, open and closed loop: every flow conserves its packets, a
// complete flow's FCT is never below its ideal, and closed-loop flows complete
// (nothing is lost for good).
func TestCommittedTracesFCT(t *testing.T) {
	for _, name := range []string{"demo", "incast", "many-flows", "tcp-incast", "ipv6", "mixed", "midconn"} {
		for _, closed := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "/open", true: "/closed"}[closed], func(t *testing.T) {
				var mut func(*Options)
				if closed {
					mut = closedOpts
				}
				_, dir := runTrace(t, "testdata/pcaps/"+name+".pcap", mut)
				flows := readFlows(t, dir)
				var complete int
				for _, f := range flows {
					if f.Packets != f.Delivered+f.Dropped+f.Undrained {
						t.Fatalf("flow %d: %d packets, %d delivered, %d dropped, %d undrained", f.FlowID, f.Packets, f.Delivered, f.Dropped, f.Undrained)
					}
					if f.IdealFctPs <= 0 && f.SizeBytes > 0 || f.IdealFctPs != 0 && f.SizeBytes == 0 {
						t.Fatalf("flow %d: ideal FCT %d", f.FlowID, f.IdealFctPs)
					}
					if f.Completion == records.CompletionComplete {
						complete++
						if f.FctPs < f.IdealFctPs {
							t.Fatalf("flow %d: FCT %d < ideal %d", f.FlowID, f.FctPs, f.IdealFctPs)
						}
					} else if closed && f.Transport != records.TransportOpen {
						t.Errorf("closed-loop flow %d ended %v", f.FlowID, f.Completion)
					}
					if !closed && f.Transport != records.TransportOpen {
						t.Fatalf("open run has a %v flow", f.Transport)
					}
				}
				t.Logf("%d flows, %d complete", len(flows), complete)
			})
		}
	}
}

// sortPackets orders packets by time (stable).
func sortPackets(p []tracegen.Packet) {
	slices.SortStableFunc(p, func(a, b tracegen.Packet) int { return cmp.Compare(a.Time, b.Time) })
}

// runTraceAbs is runTrace for a trace outside the repository.
func runTraceAbs(t *testing.T, trace string, mutate func(*Options)) (*records.Run, string) {
	t.Helper()
	opt := Options{Traces: []string{trace}, Warn: func(s string) { t.Log("warning:", s) }}
	if mutate != nil {
		mutate(&opt)
	}
	pr, err := Prepare(opt)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	run, err := pr.Run(out, "")
	if err != nil {
		t.Fatal(err)
	}
	return run, out
}

// The committed congesting TCP trace: closed loop drops less and keeps the
// bottleneck queue (rack-p0-r1's port to the receiver) shorter than open loop, and
// its receivers' ACKs replace the captured ones: 16 incast flows of 414 segments
// (300 us / 723.04 ns) ACKed every second one, 16 x 207, plus 200 responses of 16
// packets ACKed every second one, 200 x 8: 4,912.
func TestClosedLoopRelievesTCPIncast(t *testing.T) {
	type result struct {
		drops, queue int64
		run          *records.Run
	}
	measure := func(closed bool) result {
		var mut func(*Options)
		if closed {
			mut = closedOpts
		}
		run, dir := runTrace(t, "testdata/pcaps/tcp-incast.pcap", mut)
		r, err := records.OpenPorts(filepath.Join(dir, records.PortsFile))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var res result
		var row records.PortRow
		for r.Next(&row) {
			if r.Nodes()[row.Node] == "rack-p0-r1" && row.Port == 0 {
				res.queue = max(res.queue, row.QueueWatermarkBytes)
			}
		}
		res.drops, res.run = run.Simulation.DroppedTotal(), run
		return res
	}
	open, closed := measure(false), measure(true)
	t.Logf("open loop: %d drops, bottleneck queue %d B; closed loop: %d drops, %d B", open.drops, open.queue, closed.drops, closed.queue)
	if open.drops == 0 {
		t.Fatal("open loop does not congest: the trace no longer tests anything")
	}
	if closed.drops >= open.drops || closed.queue >= open.queue {
		t.Errorf("closed loop: %d drops, queue %d B; open loop: %d drops, queue %d B", closed.drops, closed.queue, open.drops, open.queue)
	}
	var replaced map[string]int64
	var tr struct {
		Replaced map[string]int64 `json:"replaced"`
	}
	if err := json.Unmarshal(closed.run.Trace, &tr); err != nil {
		t.Fatal(err)
	}
	replaced = tr.Replaced
	if replaced["tcp-ack"] != 4912 || closed.run.Simulation.Injected+4912 != open.run.Simulation.Injected {
		t.Errorf("replaced %v; injected %d closed, %d open", replaced, closed.run.Simulation.Injected, open.run.Simulation.Injected)
	}
}

// The committed RoCE incast (incast.pcap: 16 senders at line rate to one host, a
// lossless class) with the DCQCN paper's ECN marking (Kmin 5 KB, Kmax 200 KB, Pmax
// 1%): no lossless drop in either mode, every closed-loop flow completes, and DCQCN
// cuts the PFC pause frames to at most a fifth of open loop's.
func TestDCQCNIncastPausesLess(t *testing.T) {
	pauses := func(closed bool) (*records.Run, int64, []records.FlowRow) {
		mut := func(o *Options) {
			c := config.Default()
			c.Switch.EcnMinThreshold, c.Switch.EcnMaxThreshold, c.Switch.EcnMaxProbability = 5*units.KB, 200*units.KB, 0.01
			if closed {
				c.Transport.Mode = config.TransportClosed
			}
			o.Config = &c
		}
		run, dir := runTrace(t, "testdata/pcaps/incast.pcap", mut)
		r, err := records.OpenPFC(filepath.Join(dir, records.PFCFile))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var n int64
		var row records.PFCRow
		for r.Next(&row) {
			if row.Event == records.EventTxPause {
				n++
			}
		}
		return run, n, readFlows(t, dir)
	}
	openRun, open, _ := pauses(false)
	closedRun, closed, flows := pauses(true)
	t.Logf("PFC pause frames: open loop %d, closed loop %d (%.3f)", open, closed, float64(closed)/float64(open))
	if openRun.Simulation.LosslessDrops != 0 || closedRun.Simulation.LosslessDrops != 0 {
		t.Errorf("lossless drops: open %d, closed %d", openRun.Simulation.LosslessDrops, closedRun.Simulation.LosslessDrops)
	}
	if open == 0 || 5*closed > open {
		t.Errorf("PFC pause frames: closed loop %d, open loop %d: want at most a fifth", closed, open)
	}
	var roce int
	for _, f := range flows {
		if f.Completion != records.CompletionComplete {
			t.Errorf("flow %d (%v) ended %v", f.FlowID, f.Transport, f.Completion)
		}
		if f.Transport == records.TransportDCQCN {
			roce++
		}
	}
	if roce != 20 {
		t.Errorf("%d DCQCN flows, want the 16 incast senders and 4 victims", roce)
	}
}
