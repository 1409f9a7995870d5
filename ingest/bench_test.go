package ingest

import (
	"bufio"
	"flag"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

var benchTrace = flag.String("benchtrace", "", "write the generated 1M-packet benchmark trace to this path (and use it)")

const benchPackets = 1_000_000

var (
	benchOnce sync.Once
	benchPath string
	benchErr  error
	benchDir  string
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// genBenchTrace writes a headers-only (snaplen 64) Ethernet capture of 1M IPv4
// packets: 4096 flows over 16 /24s, RoCEv2 (UDP 4791, DSCP 26, ECT(0)) and TCP
// (DSCP 0 or 46), sizes 64..4096 bytes in the IPv4 total length, 100 ns apart on
// average with 1 us of backward jitter now and then (exercising the reorder
// buffer), 1 in 64 packets 802.1Q-tagged. Seeded: the same file every time.
func genBenchTrace(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := pcapgo.NewWriterNanos(bw)
	if err := w.WriteFileHeader(64, layers.LinkTypeEthernet); err != nil {
		return err
	}
	serialize := func(tagged bool, l4 gopacket.SerializableLayer, proto layers.IPProtocol) []byte {
		ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: proto, SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 1, 1}}
		if n, ok := l4.(interface {
			SetNetworkLayerForChecksum(gopacket.NetworkLayer) error
		}); ok {
			n.SetNetworkLayerForChecksum(ip)
		}
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		ls := []gopacket.SerializableLayer{eth}
		if tagged {
			eth.EthernetType = layers.EthernetTypeDot1Q
			ls = append(ls, &layers.Dot1Q{VLANIdentifier: 7, Type: layers.EthernetTypeIPv4})
		}
		ls = append(ls, ip, l4, gopacket.Payload(make([]byte, 64)))
		buf := gopacket.NewSerializeBuffer()
		gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...)
		return append([]byte(nil), buf.Bytes()[:64]...)
	}
	var tmpl [2][2][]byte // [tagged][tcp]
	for tg := 0; tg < 2; tg++ {
		tmpl[tg][0] = serialize(tg == 1, &layers.UDP{SrcPort: 1, DstPort: 4791}, layers.IPProtocolUDP)
		tmpl[tg][1] = serialize(tg == 1, &layers.TCP{SrcPort: 1, DstPort: 80, ACK: true, Window: 1000}, layers.IPProtocolTCP)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	type flow struct {
		src, dst     [4]byte
		sport, dport uint16
		tcp          bool
		tos          byte
	}
	flows := make([]flow, 4096)
	for i := range flows {
		fl := &flows[i]
		fl.src = [4]byte{10, byte(rng.IntN(16)), byte(rng.IntN(4)), byte(1 + rng.IntN(32))}
		fl.dst = [4]byte{10, byte(rng.IntN(16)), byte(rng.IntN(4)), byte(1 + rng.IntN(32))}
		fl.sport = uint16(49152 + rng.IntN(16384))
		switch r := rng.IntN(10); {
		case r < 6:
			fl.dport, fl.tos = 4791, 26<<2|2
		case r < 9:
			fl.tcp, fl.dport, fl.tos = true, 80, 2
		default:
			fl.tcp, fl.dport, fl.tos = true, 5060, 46<<2
		}
	}
	ts := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	frame := make([]byte, 64)
	for i := 0; i < benchPackets; i++ {
		fl := &flows[rng.IntN(len(flows))]
		tg, tc := 0, 0
		if i%64 == 63 {
			tg = 1
		}
		if fl.tcp {
			tc = 1
		}
		copy(frame, tmpl[tg][tc])
		ip := frame[14+4*tg:]
		ip[1] = fl.tos
		tl := 64 + rng.IntN(4033)
		ip[2], ip[3] = byte(tl>>8), byte(tl)
		copy(ip[12:16], fl.src[:])
		copy(ip[16:20], fl.dst[:])
		ip[20], ip[21], ip[22], ip[23] = byte(fl.sport>>8), byte(fl.sport), byte(fl.dport>>8), byte(fl.dport)
		ts += int64(50 + rng.IntN(100))
		pts := ts
		if rng.IntN(1000) == 0 {
			pts -= 1000 // 1 us late: within the window
		}
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, pts), CaptureLength: 64, Length: 14 + 4*tg + tl}
		if err := w.WritePacket(ci, frame); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// cpuTime returns the process's user+system CPU time. On a shared machine the
// wall-clock rate depends on the neighbours; CPU time per packet does not (much).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchFile(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		if *benchTrace != "" {
			benchPath = *benchTrace
		} else {
			benchDir, benchErr = os.MkdirTemp("", "ingest-bench-")
			if benchErr != nil {
				return
			}
			benchPath = filepath.Join(benchDir, "bench-1M.pcap")
		}
		if st, err := os.Stat(benchPath); err == nil && st.Size() == 24+benchPackets*(16+64) {
			return // generated before (the generator is deterministic)
		}
		benchErr = genBenchTrace(benchPath)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchPath
}

// BenchmarkDecodeSummarize measures the per-packet hot path on the generated
// 1M-packet trace: read (pcapgo), decode, reorder and add to a summary
// accumulator. One op is one packet; the reader reopens the file at its end.
func BenchmarkDecodeSummarize(b *testing.B) {
	path := benchFile(b)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size() / benchPackets) // MB/s of capture file
	a := newAcc()
	open := func() *Reader {
		r, err := Open([]string{path}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	r := open()
	var p Packet
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		ok, err := r.Next(&p)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			r.Close()
			r = open()
			i--
			continue
		}
		a.add(&p)
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	b.StopTimer()
	r.Close()
	b.ReportMetric(float64(b.N)/el.Seconds(), "packets/s")
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "packets/cpu-s")
}

// BenchmarkSummarize measures Summarize over the whole 1M-packet file (one op),
// setup included.
func BenchmarkSummarize(b *testing.B) {
	path := benchFile(b)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		s, err := Summarize([]string{path}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if s.IPv4Packets != benchPackets || s.Skipped[SkipOutOfOrder.String()] != 0 {
			b.Fatalf("summary %+v", s)
		}
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	b.ReportMetric(float64(b.N)*benchPackets/el.Seconds(), "packets/s")
	b.ReportMetric(float64(b.N)*benchPackets/cpu.Seconds(), "packets/cpu-s")
	b.ReportMetric(float64(b.N)*float64(st.Size())/1e6/cpu.Seconds(), "MB/cpu-s")
}

// BenchmarkSummarizeCold is BenchmarkSummarize with the pools emptied before each
// pass (two GCs, untimed), the way a later pass finds them in a long run: the
// reorder buffer's allocation for one window shows in B/op.
func BenchmarkSummarizeCold(b *testing.B) {
	path := benchFile(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		runtime.GC()
		b.StartTimer()
		s, err := Summarize([]string{path}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if s.IPv4Packets != benchPackets {
			b.Fatalf("summary %+v", s)
		}
	}
}
