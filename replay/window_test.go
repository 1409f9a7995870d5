package replay

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// udpAt is a UDP packet from src to dst at t.
func udpAt(t units.Time, src, dst string) tracegen.Packet {
	return tracegen.Packet{Time: t, Src: addr(src), Dst: addr(dst), Proto: layers.IPProtocolUDP, SrcPort: 1, DstPort: 2, Length: 100}
}

// replayed runs the prepared options and returns run.json's trace section and the
// injection times of the packets (ps), in trace order.
func replayed(t *testing.T, opt Options) (*records.Run, map[string]json.RawMessage, []int64) {
	t.Helper()
	opt.RecordPackets = true
	pr, err := Prepare(opt)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	run, err := pr.Run(out, "")
	if err != nil {
		t.Fatal(err)
	}
	var tr map[string]json.RawMessage
	if err := json.Unmarshal(run.Trace, &tr); err != nil {
		t.Fatal(err)
	}
	rows, _, err := records.ReadAll(records.OpenPackets(filepath.Join(out, records.PacketsFile)))
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(rows, func(a, b records.PacketRow) int { return int(a.TraceIndex - b.TraceIndex) })
	var at []int64
	for _, r := range rows {
		at = append(at, r.InjectPs)
	}
	return run, tr, at
}

func idleOf(t *testing.T, tr map[string]json.RawMessage) (maxS float64, shortened int64, removedS float64) {
	t.Helper()
	var v struct {
		MaxIdleS  float64 `json:"max_idle_s"`
		Shortened int64   `json:"shortened"`
		RemovedS  float64 `json:"removed_s"`
	}
	if err := json.Unmarshal(tr["idle_gaps"], &v); err != nil {
		t.Fatal(err)
	}
	return v.MaxIdleS, v.Shortened, v.RemovedS
}

func ps(d units.Time) int64 { return int64(d) }

// --max-idle shortens each gap longer than it to it, between consecutive packets of
// the MERGED capture (here two files interleaved), and keeps the spacing otherwise;
// run.json says how many gaps and how much time.
func TestMaxIdle(t *testing.T) {
	a := writeTrace(t, []tracegen.Packet{udpAt(0, "10.0.0.1", "10.0.1.1"), udpAt(units.Second, "10.0.0.1", "10.0.1.1"),
		udpAt(10*units.Second+5*units.Microsecond, "10.0.0.1", "10.0.1.1")})
	b := writeTrace(t, []tracegen.Packet{udpAt(10*units.Second, "10.0.1.1", "10.0.0.1"), udpAt(11*units.Second, "10.0.1.1", "10.0.0.1")})
	opt := Options{Traces: []string{a, b}, MaxIdle: 100 * time.Millisecond}
	_, tr, at := replayed(t, opt)
	// Merged: 0 (a), 1 s (a), 10 s (b), 10 s + 5 us (a), 11 s (b). Gaps over 100 ms:
	// 1 s, 9 s and 1 s - 5 us, each cut to 100 ms.
	ms, us := ps(units.Millisecond), ps(units.Microsecond)
	want := []int64{0, 100 * ms, 200 * ms, 200*ms + 5*us}
	// trace_index orders file a's packets before file b's: a0 a1 a2 b0 b1.
	wantByIndex := []int64{want[0], want[1], want[3], want[2], 300*ms + 5*us}
	if !slices.Equal(at, wantByIndex) {
		t.Errorf("injection times %v ps, want %v", at, wantByIndex)
	}
	maxS, n, removed := idleOf(t, tr)
	if maxS != 0.1 || n != 3 || removed < 10.7-5e-6-1e-9 || removed > 10.7-5e-6+1e-9 {
		t.Errorf("idle_gaps: max %g s, %d shortened, %g s removed; want 0.1, 3, %g", maxS, n, removed, 10.7-5e-6)
	}
	// Without --max-idle the times are the capture's.
	_, tr, at = replayed(t, Options{Traces: []string{a, b}})
	if at[3] != 10*ps(units.Second) {
		t.Errorf("without --max-idle: %v", at)
	}
	if _, n, _ := idleOf(t, tr); n != 0 {
		t.Errorf("without --max-idle: %d gaps shortened", n)
	}
}

// A capture spanning 60 days (beyond the simulator's clock) replays with --max-idle;
// the error without it suggests --max-idle and a window before --speedup, in human
// units.
func TestTimeRangeSuggestions(t *testing.T) {
	gap := 60 * 24 * 3600 * units.Second
	trace := writeTrace(t, []tracegen.Packet{udpAt(0, "10.0.0.1", "10.0.1.1"), udpAt(units.Microsecond, "10.0.0.1", "10.0.1.1"),
		udpAt(gap, "10.0.0.1", "10.0.1.1")})
	_, err := Prepare(Options{Traces: []string{trace}})
	if !errors.Is(err, ErrInput) {
		t.Fatalf("60-day capture: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"trace.pcap: the capture spans 60 d", "--max-idle", "--start and --duration", "raise --speedup to at least 2"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Index(msg, "--max-idle") > strings.Index(msg, "--speedup") || strings.Contains(msg, "bad input") || strings.Contains(msg, "h0m0s") {
		t.Errorf("error %q: --max-idle comes first, in the user's words", msg)
	}
	// A --max-idle that still leaves too long a span says so.
	_, err = Prepare(Options{Traces: []string{trace}, MaxIdle: 55 * 24 * time.Hour})
	if err == nil || !strings.Contains(err.Error(), "still 55 d with its 1 idle gap shortened to --max-idle 55 d") || !strings.Contains(err.Error(), "shorter --max-idle") {
		t.Errorf("--max-idle 55 d: %v", err)
	}
	run, tr, at := replayed(t, Options{Traces: []string{trace}, MaxIdle: time.Second})
	if want := []int64{0, ps(units.Microsecond), ps(units.Microsecond + units.Second)}; !slices.Equal(at, want) || run.Simulation.Delivered != 3 {
		t.Errorf("--max-idle 1s: injected at %v, want %v; delivered %d", at, want, run.Simulation.Delivered)
	}
	if _, n, removed := idleOf(t, tr); n != 1 || removed != (gap-units.Microsecond-units.Second).Seconds() {
		t.Errorf("--max-idle 1s: %d gaps, %g s removed", n, removed)
	}
}

// --start and --duration replay a window: time zero is the first replayed packet,
// packets outside are counted out-of-window, and the endpoints of packets outside
// the window need no host.
func TestWindowReplay(t *testing.T) {
	var pkts []tracegen.Packet
	for i := range 10 {
		dst := "10.0.1.1"
		if i == 9 {
			dst = "10.0.9.9" // only outside the window
		}
		pkts = append(pkts, udpAt(units.Time(i)*units.Second+units.Millisecond, "10.0.0.1", dst))
	}
	trace := writeTrace(t, pkts)
	first := time.Unix(1_700_000_000, int64(time.Millisecond)).UnixNano()
	for _, c := range []struct {
		name string
		w    ingest.Window
	}{
		{"relative", ingest.Window{Start: int64(3 * time.Second), Duration: int64(4 * time.Second)}},
		{"absolute", ingest.Window{Start: first + int64(2500*time.Millisecond), Absolute: true, Duration: int64(4 * time.Second)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := Options{Traces: []string{trace}, Window: c.w}
			pr, err := Prepare(opt)
			if err != nil {
				t.Fatal(err)
			}
			if pr.HostMap.Len() != 2 {
				t.Errorf("%d endpoints mapped, want 2 (10.0.9.9 is outside the window)", pr.HostMap.Len())
			}
			run, tr, at := replayed(t, opt)
			sec := ps(units.Second)
			if want := []int64{0, sec, 2 * sec, 3 * sec}; !slices.Equal(at, want) {
				t.Errorf("injected at %v, want %v", at, want)
			}
			var skipped map[string]int64
			json.Unmarshal(tr["skipped"], &skipped)
			var replayedN int64
			json.Unmarshal(tr["replayed"], &replayedN)
			if skipped["out-of-window"] != 6 || replayedN != 4 || run.Simulation.Injected != 4 {
				t.Errorf("out-of-window %d, replayed %d, injected %d; want 6, 4, 4", skipped["out-of-window"], replayedN, run.Simulation.Injected)
			}
			var t0 string
			json.Unmarshal(tr["t0_ts"], &t0)
			if want := ingest.FormatTime(first + 3*int64(time.Second)); t0 != want {
				t.Errorf("t0_ts %q, want %q", t0, want)
			}
			if run.Options.WindowNs != int64(4*time.Second) || run.Options.WindowAbsolute != c.w.Absolute {
				t.Errorf("options %+v", run.Options)
			}
		})
	}
	_, err := Prepare(Options{Traces: []string{trace}, Window: ingest.Window{Start: int64(time.Hour)}})
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "10 packets outside the window") {
		t.Errorf("window past the end: %v", err)
	}
}

// Multicast and broadcast packets are not simulated: counted skipped.multicast, no
// host for their groups, and the replay's time zero is the first unicast packet.
func TestMulticastNotReplayed(t *testing.T) {
	trace := writeTrace(t, []tracegen.Packet{
		udpAt(0, "10.0.0.7", "224.0.0.251"), // mDNS from a host that sends nothing else
		udpAt(units.Second, "10.0.0.1", "10.0.1.1"),
		udpAt(2*units.Second, "10.0.0.1", "239.255.255.250"),
		udpAt(3*units.Second, "10.0.1.1", "255.255.255.255"),
		udpAt(4*units.Second, "10.0.1.1", "10.0.0.1"),
	})
	pr, err := Prepare(Options{Traces: []string{trace}})
	if err != nil {
		t.Fatal(err)
	}
	if pr.HostMap.Len() != 2 || pr.Summary.IPv4Packets != 5 {
		t.Errorf("%d endpoints mapped (want 2), %d IPv4 packets (want 5)", pr.HostMap.Len(), pr.Summary.IPv4Packets)
	}
	run, tr, at := replayed(t, Options{Traces: []string{trace}})
	var skipped map[string]int64
	json.Unmarshal(tr["skipped"], &skipped)
	if skipped["multicast"] != 3 || run.Simulation.Injected != 2 || !slices.Equal(at, []int64{0, 3 * ps(units.Second)}) {
		t.Errorf("multicast %d, injected %d at %v; want 3, 2 at [0 3s]", skipped["multicast"], run.Simulation.Injected, at)
	}
	only := writeTrace(t, []tracegen.Packet{udpAt(0, "10.0.0.7", "224.0.0.251")})
	if _, err := Prepare(Options{Traces: []string{only}}); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "no IP unicast packets to replay (1 multicast or broadcast packet)") {
		t.Errorf("multicast only: %v", err)
	}
}

// With reordering off, a packet earlier than one before it enters at the latest
// time so far: replay time never goes backwards (and never wraps).
func TestBackwardsTimestampsClamp(t *testing.T) {
	trace := writeTrace(t, []tracegen.Packet{udpAt(0, "10.0.0.1", "10.0.1.1"), udpAt(units.Second, "10.0.0.1", "10.0.1.1"),
		udpAt(units.Second/2, "10.0.0.1", "10.0.1.1"), udpAt(2*units.Second, "10.0.0.1", "10.0.1.1")})
	_, _, at := replayed(t, Options{Traces: []string{trace}, ReorderWindow: -1})
	sec := ps(units.Second)
	if want := []int64{0, sec, sec, 2 * sec}; !slices.Equal(at, want) {
		t.Errorf("injected at %v, want %v", at, want)
	}
}
