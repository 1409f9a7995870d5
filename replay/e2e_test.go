package replay

import (
	"bytes"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// writeTrace writes pkts as a nanosecond pcap; times are offsets from a fixed epoch.
func writeTrace(t *testing.T, pkts []tracegen.Packet) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc, err := tracegen.NewEncoder(tracegen.Snaplen6) // IPv6 headers fit too
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriterNanos(f)
	if err := w.WriteFileHeader(uint32(enc.Snaplen()), layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i := range pkts {
		data, wire, err := enc.Encode(&pkts[i])
		if err != nil {
			t.Fatal(err)
		}
		ci := captureInfo(int64(pkts[i].Time/units.Nanosecond), len(data), wire)
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// TestLonePacketTiming: a packet between pods crosses host-rack, rack-fabric,
// fabric-spine, spine-fabric, fabric-rack, rack-host; with nothing else in the
// fabric it arrives exactly at 6 x (serialization of its wire bytes + 1 us).
func TestLonePacketTiming(t *testing.T) {
	for _, length := range []int{46, 1500, 9000} {
		pkts := []tracegen.Packet{{Time: 0, Src: addr("10.0.0.1"), Dst: addr("10.0.4.1"), Proto: layers.IPProtocolUDP,
			SrcPort: 1000, DstPort: 4791, DSCP: 26, ECN: 2, Length: length}}
		trace := writeTrace(t, pkts)
		// Subnet mapping would put 10.0.4.x on rack-p0-r1 (group 1): a CSV mapping puts
		// the receiver in pod 1.
		csv := filepath.Join(t.TempDir(), "hosts.csv")
		os.WriteFile(csv, []byte("10.0.0.1/32,host-p0-r0-h0\n10.0.4.1/32,host-p1-r2-h3\n"), 0o644)
		pr, err := Prepare(Options{Traces: []string{trace}, RecordPackets: true, Hosts: csv})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "run")
		run, err := pr.Run(out, "")
		if err != nil {
			t.Fatal(err)
		}
		rows, nodes, err := records.ReadAll(records.OpenPackets(filepath.Join(out, records.PacketsFile)))
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("%d packet rows, want 1", len(rows))
		}
		frame := int64(max(64, length+18))
		hop := units.SerializationTime(frame+20, 100*units.Gbps) + units.Microsecond
		if got, want := rows[0].DeliverPs-rows[0].InjectPs, int64(6*hop); got != want {
			t.Errorf("L=%d: delivered after %d ps, want 6 x %d = %d", length, got, hop, want)
		}
		var path []string
		for _, n := range rows[0].Path {
			path = append(path, nodes[n])
		}
		if len(path) != 7 || path[0] != "host-p0-r0-h0" || path[6] != "host-p1-r2-h3" || path[3][:6] != "spine-" {
			t.Errorf("path %v", path)
		}
		if run.Simulation.PacketHops != 6 || run.Simulation.Delivered != 1 {
			t.Errorf("hops %d delivered %d, want 6 and 1", run.Simulation.PacketHops, run.Simulation.Delivered)
		}
	}
}

// TestConservationFromRecords: totals and per-flow conservation, read back from the
// record files, and the ports counters agree with run.json.
func TestConservationFromRecords(t *testing.T) {
	for _, trace := range []string{"testdata/pcaps/demo.pcap", "testdata/pcaps/incast.pcap"} {
		t.Run(filepath.Base(trace), func(t *testing.T) {
			run, out := runTrace(t, trace, func(o *Options) { o.RecordPackets = true })
			s := run.Simulation
			if s.Injected != s.Delivered+s.DroppedTotal()+s.UndrainedTotal() {
				t.Errorf("run.json: injected %d != delivered %d + dropped %d + undrained %d", s.Injected, s.Delivered, s.DroppedTotal(), s.UndrainedTotal())
			}
			flows, _, err := records.ReadAll(records.OpenFlows(filepath.Join(out, records.FlowsFile)))
			if err != nil {
				t.Fatal(err)
			}
			var inj, del, drop, und int64
			for _, f := range flows {
				if f.Packets != f.Delivered+f.Dropped+f.Undrained || f.Undrained < 0 {
					t.Fatalf("flow %d: packets %d != delivered %d + dropped %d + undrained %d", f.FlowID, f.Packets, f.Delivered, f.Dropped, f.Undrained)
				}
				inj += f.Packets
				del += f.Delivered
				drop += f.Dropped
				und += f.Undrained
			}
			if inj != s.Injected || del != s.Delivered || drop != s.DroppedTotal() || und != s.UndrainedTotal() {
				t.Errorf("flows sum %d/%d/%d/%d, run.json %d/%d/%d/%d", inj, del, drop, und, s.Injected, s.Delivered, s.DroppedTotal(), s.UndrainedTotal())
			}
			drops, _, err := records.ReadAll(records.OpenDrops(filepath.Join(out, records.DropsFile)))
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(drops)) != s.DroppedTotal() {
				t.Errorf("drops.arrow has %d rows, run.json %d drops", len(drops), s.DroppedTotal())
			}
			ports, _, err := records.ReadAll(records.OpenPorts(filepath.Join(out, records.PortsFile)))
			if err != nil {
				t.Fatal(err)
			}
			var pdrops, marked, pauseTx, resumeTx int64
			var hostTx int64
			for _, p := range ports {
				pdrops += p.DropsTotal()
				marked += p.ECNMarked
				pauseTx += p.PFCPauseTx
				resumeTx += p.PFCResumeTx
				if p.Tier == records.TierHost {
					hostTx += p.TxPackets
				}
			}
			if pdrops != s.DroppedTotal() || marked != s.CEMarked {
				t.Errorf("ports: drops %d marked %d; run.json %d, %d", pdrops, marked, s.DroppedTotal(), s.CEMarked)
			}
			pkts, _, err := records.ReadAll(records.OpenPackets(filepath.Join(out, records.PacketsFile)))
			if err != nil {
				t.Fatal(err)
			}
			fates := map[records.Fate]int64{}
			for _, p := range pkts {
				fates[p.Fate]++
			}
			if int64(len(pkts)) != s.Injected || fates[records.FateDelivered] != s.Delivered || fates[records.FateDropped] != s.DroppedTotal() {
				t.Errorf("packets.arrow: %d rows %v; run.json injected %d delivered %d dropped %d", len(pkts), fates, s.Injected, s.Delivered, s.DroppedTotal())
			}
			if s.PacketHops < hostTx {
				t.Errorf("packet hops %d < host transmissions %d", s.PacketHops, hostTx)
			}
			if s.Dropped[records.ReasonHeadroom] != 0 {
				t.Errorf("%d headroom drops under Headroom auto", s.Dropped[records.ReasonHeadroom])
			}
			for name, rows := range run.Records {
				if name == records.RunFile {
					continue
				}
				tbl, err := records.ReadTable(filepath.Join(out, name))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if tbl.NumRows() != rows {
					t.Errorf("%s: %d rows, run.json says %d", name, tbl.NumRows(), rows)
				}
				want, _ := records.Schema(name)
				if !tbl.Schema().Equal(want) {
					t.Errorf("%s: schema differs from the documented one", name)
				}
				tbl.Release()
			}
		})
	}
}

// TestDeterministicRecords: the same trace and seed give byte-identical record files,
// open and closed loop.
func TestDeterministicRecords(t *testing.T) {
	for _, closed := range []bool{false, true} {
		mut := func(o *Options) {
			if closed {
				closedOpts(o)
			}
			o.RecordPackets = true
		}
		run, a := runTrace(t, "testdata/pcaps/demo.pcap", mut)
		_, b := runTrace(t, "testdata/pcaps/demo.pcap", mut)
		if _, ok := run.Records[records.TransportFile]; ok != closed {
			t.Errorf("closed loop %v: records %v", closed, run.Records)
		}
		sameFiles(t, run, a, b)
	}
}

// sameFiles checks that the record files of run exist in directories a and b, byte
// for byte the same.
func sameFiles(t *testing.T, run *records.Run, a, b string) {
	t.Helper()
	for name := range run.Records {
		x, err := os.ReadFile(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between %s and %s", name, a, b)
		}
	}
}

// TestOversize: with Mtu 4000, a 9000-byte packet is split into 4000 + 4000 + 1000
// by default, or dropped at its source NIC with reason oversize.
func TestOversize(t *testing.T) {
	pkts := []tracegen.Packet{
		{Time: 0, Src: addr("10.0.0.1"), Dst: addr("10.0.1.1"), Proto: layers.IPProtocolTCP, SrcPort: 5000, DstPort: 80, Length: 9000},
		{Time: units.Microsecond, Src: addr("10.0.0.1"), Dst: addr("10.0.1.1"), Proto: layers.IPProtocolTCP, SrcPort: 5000, DstPort: 80, Length: 1500},
	}
	trace := writeTrace(t, pkts)
	for _, mode := range []string{OversizeSplit, OversizeDrop} {
		t.Run(mode, func(t *testing.T) {
			cfg := config.Default()
			cfg.Switch.Mtu = 4000
			pr, err := Prepare(Options{Traces: []string{trace}, Oversize: mode, Config: &cfg})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "run")
			run, err := pr.Run(out, "")
			if err != nil {
				t.Fatal(err)
			}
			s := run.Simulation
			flows, _, err := records.ReadAll(records.OpenFlows(filepath.Join(out, records.FlowsFile)))
			if err != nil || len(flows) != 1 {
				t.Fatalf("flows %v, %v", flows, err)
			}
			ports, _, _ := records.ReadAll(records.OpenPorts(filepath.Join(out, records.PortsFile)))
			var oversize int64
			for _, p := range ports {
				oversize += p.Drops[records.ReasonOversize]
			}
			switch mode {
			case OversizeSplit:
				if s.Injected != 4 || s.Delivered != 4 || flows[0].Bytes != 10500 || oversize != 0 {
					t.Errorf("split: injected %d delivered %d bytes %d oversize drops %d; want 4, 4, 10500, 0", s.Injected, s.Delivered, flows[0].Bytes, oversize)
				}
			case OversizeDrop:
				if s.Injected != 2 || s.Delivered != 1 || s.Dropped[records.ReasonOversize] != 1 || oversize != 1 || flows[0].Dropped != 1 {
					t.Errorf("drop: injected %d delivered %d dropped %v ports oversize %d flow dropped %d", s.Injected, s.Delivered, s.Dropped, oversize, flows[0].Dropped)
				}
			}
		})
	}
}

// A run that reads the capture again (the trace not cached) reads an in-order trace
// without ingest's reorder buffer; if the file changed since Prepare so that it is
// no longer in order, the run fails as bad input naming the file and packet instead
// of replaying another trace.
func TestTraceChangedBetweenPrepareAndRun(t *testing.T) {
	mk := func(times ...units.Time) []tracegen.Packet {
		var out []tracegen.Packet
		for i, at := range times {
			out = append(out, tracegen.Packet{Time: at, Src: addr("10.0.0.1"), Dst: addr("10.0.4.1"),
				Proto: layers.IPProtocolUDP, SrcPort: uint16(1000 + i), DstPort: 4791, Length: 1000})
		}
		return out
	}
	trace := writeTrace(t, mk(0, units.Microsecond, 2*units.Microsecond))
	pr, err := Prepare(Options{Traces: []string{trace}, Cache: NoCache})
	if err != nil {
		t.Fatal(err)
	}
	if !pr.Summary.Files[0].InOrder {
		t.Fatal("trace not found in order")
	}
	if _, err := pr.Run(filepath.Join(t.TempDir(), "ok"), ""); err != nil {
		t.Fatal(err)
	}
	changed := writeTrace(t, mk(0, 2*units.Microsecond, units.Microsecond))
	data, err := os.ReadFile(changed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trace, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	_, err = pr.Run(out, "")
	if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), trace+": packet 2 is earlier than the packet before it") {
		t.Fatalf("err = %v, want ErrInput naming %s packet 2", err, trace)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output directory left behind: %v", err)
	}
}
