package replay

import (
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
)

// A sender idle longer than its RTO restarts its window (docs/model.md#tcp, RFC 5681
// section 4.1), from a hand-built capture: one NewReno flow (Not-ECT, no SYN: SMSS
// 9000 - 40 = 8,960, IW = min(10 SMSS, max(2 SMSS, 14,600)) = 17,920 B) sends 200
// segments of 1460 payload bytes (L = 1500) captured 1 ns apart at 0, then 200 more
// at `second`. Alone in the fabric nothing is lost, every ACK acknowledges 1460 B in
// slow start, so after the first burst cwnd = 17,920 + 200 x 1460 = 309,920 B. The
// second burst's segments that enter the NIC within 1 us of its first (an ACK needs
// 4 us to come back from the next rack at the earliest) are the window it starts
// with; RTO = MinRto = 10 ms (the RTT samples are microseconds):
//
//   - idle 30 ms > RTO, rfc5681: cwnd = min(cwnd, IW) = 17,920 B: 12 segments
//     (12 x 1460 = 17,520);
//   - idle 30 ms, linux: halved once per RTO of idle beyond the first (30 ms minus the
//     first burst's last send, about 0.1 ms: twice): 309,920 / 4 = 77,480 B: 53
//     segments (77,380);
//   - idle 30 ms, off: the window kept: all 200 (292,000 B);
//   - idle 5 ms < RTO, rfc5681: no restart: all 200.
func TestIdleRestartTrace(t *testing.T) {
	a, b := addr("10.0.0.1"), addr("10.0.1.1")
	for _, c := range []struct {
		name    string
		restart config.IdleRestart
		second  units.Time
		want    int
	}{
		{"rfc5681, idle 30 ms", config.IdleRfc5681, 30 * units.Millisecond, 12},
		{"linux, idle 30 ms", config.IdleLinux, 30 * units.Millisecond, 53},
		{"off, idle 30 ms", config.IdleOff, 30 * units.Millisecond, 200},
		{"rfc5681, idle 5 ms", config.IdleRfc5681, 5 * units.Millisecond, 200},
	} {
		var pkts []tracegen.Packet
		for burst, at := range []units.Time{0, c.second} {
			for i := 0; i < 200; i++ {
				pkts = append(pkts, tracegen.Packet{Time: at + units.Time(i), Src: a, Dst: b, Proto: layers.IPProtocolTCP, SrcPort: 40000, DstPort: 80,
					Length: 1500, Seq: uint32(1460 * (200*burst + i))})
			}
		}
		_, dir := runTraceAbs(t, writeTrace(t, pkts), func(o *Options) {
			closedOpts(o)
			o.Config.Transport.IdleRestart = c.restart
			o.RecordPackets = true
		})
		n := windowAt(readPackets(t, dir), 1500, int64(c.second))
		if n != c.want {
			t.Errorf("%s: the second burst starts with %d segments, want %d", c.name, n, c.want)
		}
	}
}
