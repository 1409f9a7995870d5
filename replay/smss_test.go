package replay

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// The SMSS and the initial window of a TCP flow (docs/model.md#tcp): the MSS option
// of a captured SYN (the receiver's, else the flow's own), else Mtu minus the
// headers, and RFC 6928's IW = min(10 SMSS, max(2 SMSS, 14,600 B)). The flow sends
// 20 segments of 1460 payload bytes (L = 1500), captured 1 ns apart 30 us after the
// SYN; how many enter the NIC within 1 us of the first (the first ACK is back 4 us
// later at the earliest: same rack) is the initial window:
//
//   - SYN and SYN-ACK announcing 1460 (before the data: the SYN is acknowledged by
//     30 us): SMSS 1460, IW 14,600 B = 10 segments;
//   - only the SYN-ACK (the receiver) announcing 1460: the same;
//   - only the flow's own SYN: the same (the receiver's announcement unknown);
//   - no SYN: SMSS = 9000 - 40 = 8,960, IW = 17,920 B: 12 segments (12 x 1460 =
//     17,520);
//   - no SYN, Transport.Mss 536: IW = min(5,360, max(1,072, 14,600)) = 5,360 B: 3
//     segments (4,380).
func TestInitialWindowFromSYN(t *testing.T) {
	a, b := addr("10.0.0.1"), addr("10.0.0.2")
	const burst = 30 * units.Microsecond
	for _, c := range []struct {
		name           string
		synMSS, ackMSS uint16 // 0: that SYN is not captured
		mss            units.Bytes
		want           int
	}{
		{"SYN and SYN-ACK 1460", 1460, 1460, 0, 10},
		{"SYN-ACK 1460", 0, 1460, 0, 10},
		{"SYN 1460", 1460, 0, 0, 10},
		{"no SYN", 0, 0, 0, 12},
		{"no SYN, Mss 536", 0, 0, 536, 3},
	} {
		var pkts []tracegen.Packet
		if c.synMSS != 0 {
			pkts = append(pkts, tracegen.Packet{Time: 0, Src: a, Dst: b, Proto: layers.IPProtocolTCP, SrcPort: 40000, DstPort: 80,
				Length: 44, TCPFlags: tracegen.TCPSyn, MSS: c.synMSS})
		}
		if c.ackMSS != 0 {
			pkts = append(pkts, tracegen.Packet{Time: 10 * units.Microsecond, Src: b, Dst: a, Proto: layers.IPProtocolTCP, SrcPort: 80, DstPort: 40000,
				Length: 44, TCPFlags: tracegen.TCPSyn | tracegen.TCPAck, MSS: c.ackMSS})
		}
		for i := 0; i < 20; i++ {
			pkts = append(pkts, tracegen.Packet{Time: burst + units.Time(i), Src: a, Dst: b, Proto: layers.IPProtocolTCP, SrcPort: 40000, DstPort: 80,
				Length: 1500, Seq: uint32(1 + 1460*i)})
		}
		trace := writeTrace(t, pkts)
		_, dir := runTraceAbs(t, trace, func(o *Options) {
			closedOpts(o)
			o.Config.Transport.Mss = c.mss
			o.RecordPackets = true
		})
		n := windowAt(readPackets(t, dir), 1500, 0)
		if n != c.want {
			t.Errorf("%s: %d segments before the first ACK, want %d", c.name, n, c.want)
		}
	}
}

// windowAt counts the packets of size l that entered the NIC within 1 us of the first
// one at or after from: the window a sender starts a burst with when its segments are
// all available at once and no ACK can come back within 1 us.
func windowAt(pk []records.PacketRow, l int32, from int64) int {
	first := int64(-1)
	for _, p := range pk {
		if p.Bytes == l && p.InjectPs >= from && (first < 0 || p.InjectPs < first) {
			first = p.InjectPs
		}
	}
	n := 0
	for _, p := range pk {
		if p.Bytes == l && p.InjectPs >= first && p.InjectPs < first+int64(units.Microsecond) {
			n++
		}
	}
	return n
}

// TSO and GRO captures hold super-frames that injection splits into MTU pieces; the
// SMSS is what those pieces carry, so the same bytes captured as 62,760-byte TSO frames
// (7 x 8,960 B of payload: six 9000-byte pieces and one of 8,760) and as the pieces
// themselves give the same closed-loop replay (docs/model.md#tcp). A 16-to-1 DCTCP
// incast in an 8 MiB buffer, 8 frames per sender at 10 us intervals: every record
// file is equal, but for what names the captured packets: packets.arrow's and
// drops.arrow's trace_index (the pieces of a frame share its index) and run.json's
// trace counts (packets, oversize, oversize_pieces).
func TestTSOFramesReplayAsTheirPieces(t *testing.T) {
	recv := tracegen.HostAddr(0, 0, 0)
	var tso, mtu []tracegen.Packet
	for s := 0; s < 16; s++ {
		src := tracegen.HostAddr(1+s/8, s%4, s/4%2+1) // other racks, two pods
		for k := 0; k < 8; k++ {
			at := units.Time(k)*10*units.Microsecond + units.Time(s)
			base := tracegen.Packet{Time: at, Src: src, Dst: recv, Proto: layers.IPProtocolTCP, SrcPort: uint16(40000 + s), DstPort: 5001, ECN: tracegen.ECT0}
			f := base
			f.Length, f.Seq = 7*8960+40, uint32(k*7*8960)
			tso = append(tso, f)
			for piece := 0; piece < 7; piece++ {
				p := base
				p.Length, p.Seq = 9000, uint32((k*7+piece)*8960)
				if piece == 6 {
					p.Length = 7*8960 + 40 - 6*9000 // 8760
				}
				mtu = append(mtu, p)
			}
		}
	}
	sortPackets(tso)
	sortPackets(mtu)
	run := func(pkts []tracegen.Packet) (*records.Run, string) {
		return runTraceAbs(t, writeTrace(t, pkts), func(o *Options) {
			closedOpts(o)
			o.Config.Switch.BufferSize = 8 * units.MiB
			o.RecordPackets = true
		})
	}
	rt, dt := run(tso)
	rm, dm := run(mtu)
	type counts struct {
		Replayed int64 `json:"replayed"`
		Oversize struct {
			Packets   int64 `json:"packets"`
			SplitInto int64 `json:"split_into"`
		} `json:"oversize"`
	}
	var ct, cm counts
	if err := json.Unmarshal(rt.Trace, &ct); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rm.Trace, &cm); err != nil {
		t.Fatal(err)
	}
	if ct.Replayed != 128 || ct.Oversize.Packets != 128 || ct.Oversize.SplitInto != 896 || cm.Replayed != 896 || cm.Oversize.Packets != 0 {
		t.Fatalf("trace: TSO %+v, MTU %+v", ct, cm)
	}
	ft, fm := readFlows(t, dt), readFlows(t, dm)
	if !reflect.DeepEqual(ft, fm) {
		t.Errorf("flows.arrow differs:\nTSO %+v\nMTU %+v", ft, fm)
	}
	var drops, timeouts, ce int64
	var slow []float64
	for _, f := range ft {
		drops += f.Dropped
		timeouts += f.Timeouts
		ce += f.CEMarked
		if f.Completion == records.CompletionComplete && f.IdealFctPs > 0 {
			slow = append(slow, float64(f.FctPs)/float64(f.IdealFctPs))
		}
	}
	slices.Sort(slow)
	t.Logf("both: %d drops, %d CE marks, %d retransmits, %d timeouts, slowdown p50 %.2f max %.2f", drops, ce, rt.Simulation.Retransmits, timeouts,
		slow[len(slow)/2], slow[len(slow)-1])
	if ce == 0 {
		t.Error("no CE mark: the incast does not congest the receiver's port")
	}
	if rt.Simulation.PacketHops != rm.Simulation.PacketHops || rt.Simulation.Retransmits != rm.Simulation.Retransmits {
		t.Errorf("simulation: TSO %+v, MTU %+v", rt.Simulation, rm.Simulation)
	}
	pt, pm := readPackets(t, dt), readPackets(t, dm)
	if len(pt) != len(pm) {
		t.Fatalf("%d and %d packets.arrow rows", len(pt), len(pm))
	}
	for i := range pt {
		a, b := pt[i], pm[i]
		a.TraceIndex, b.TraceIndex = 0, 0
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("packets.arrow row %d: TSO %+v, MTU %+v", i, pt[i], pm[i])
		}
	}
	for _, f := range []string{records.PortsFile, records.TransportFile, records.PFCFile, records.BufferFile, records.LoadBalanceFile, records.DelayFile} {
		x, err := os.ReadFile(filepath.Join(dt, f))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(dm, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs", f)
		}
	}
	dropsOf := func(dir string) []records.DropRow {
		rows, _, err := records.ReadAll(records.OpenDrops(filepath.Join(dir, records.DropsFile)))
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			rows[i].TraceIndex = 0
		}
		return rows
	}
	if a, b := dropsOf(dt), dropsOf(dm); !reflect.DeepEqual(a, b) || int64(len(a)) != drops {
		t.Errorf("drops.arrow: %d and %d rows (flows count %d)", len(a), len(b), drops)
	}
}
