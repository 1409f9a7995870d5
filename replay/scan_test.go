package replay

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
)

// A run decodes its capture once (docs/model.md#one-pass-over-the-capture): a capture
// that can be read only once, a named pipe, is prepared and replayed closed loop with
// its idle gaps shortened, two copies and a target load, and the run writes the
// records of the same run of the file. The pipe is gone once read: a second open
// would fail the preparation or the run.
func TestOneDecodePerRun(t *testing.T) {
	data, err := os.ReadFile(incastTrace)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load("", []string{"Transport.Mode=closed"})
	if err != nil {
		t.Fatal(err)
	}
	opt := func(trace string) Options {
		return Options{Traces: []string{trace}, Config: cfg, Version: "test", MaxIdle: time.Microsecond,
			Replicate: []int{2}, ReplicateJitter: 3 * time.Microsecond, TargetLoad: 60}
	}
	fifo := filepath.Join(t.TempDir(), "once.pcap")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	// The writer gives the capture to the first reader, and removes the pipe before
	// the reader can see the end of the capture: a later open fails.
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(data)
		os.Remove(fifo)
		f.Close()
	}()
	defer func() {
		if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close() // the writer still waits for a reader: release it
		}
		<-done
	}()
	dir := t.TempDir()
	pr, err := Prepare(opt(fifo))
	if err != nil {
		t.Fatal(err)
	}
	if !pr.Cached() || pr.Idle.Gaps == 0 || pr.Copies() == "" || pr.Opt.Speedup == 1 {
		t.Fatalf("cached %v, %d idle gaps, copies %q, speedup %g: the case does not exercise what it should",
			pr.Cached(), pr.Idle.Gaps, pr.Copies(), pr.Opt.Speedup)
	}
	a, err := pr.Run(filepath.Join(dir, "pipe"), "")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Prepare(opt(incastTrace))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ref.Run(filepath.Join(dir, "file"), "")
	if err != nil {
		t.Fatal(err)
	}
	sameRuns(t, dir, "pipe", "file", a, b)
}

// The memory rule (docs/model.md#one-pass-over-the-capture): a trace whose compact
// form passes Options.Cache is not kept, and the run reads the capture again, with
// the records of a run from memory; --target-load keeps it whatever the limit.
func TestCacheRule(t *testing.T) {
	full, err := Prepare(Options{Traces: []string{incastTrace}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	need := full.CacheBytes()
	if !full.Cached() || need != full.Summary.Unicast*CacheEntryBytes+full.Summary.UnicastFlows*CacheFlowBytes {
		t.Fatalf("cached %v in %d bytes; %d packets and %d flows", full.Cached(), need, full.Summary.Unicast, full.Summary.UnicastFlows)
	}
	for _, tc := range []struct {
		cache  int64
		target float64
		cached bool
	}{
		{need, 0, true},
		{need - 1, 0, false},
		{NoCache, 0, false},
		{need - 1, 50, true},
		{NoCache, 50, true},
	} {
		pr, err := Prepare(Options{Traces: []string{incastTrace}, Version: "test", Cache: tc.cache, TargetLoad: tc.target})
		if err != nil {
			t.Fatal(err)
		}
		if pr.Cached() != tc.cached {
			t.Errorf("Cache %d, --target-load %g: cached %v, want %v", tc.cache, tc.target, pr.Cached(), tc.cached)
		}
	}
	dir := t.TempDir()
	small, err := Prepare(Options{Traces: []string{incastTrace}, Version: "test", Cache: need - 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := full.Run(filepath.Join(dir, "memory"), "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := small.Run(filepath.Join(dir, "read"), "")
	if err != nil {
		t.Fatal(err)
	}
	sameRuns(t, dir, "memory", "read", a, b)
}

// A capture out of timestamp order is read again with the reorder window from its
// first late packet on (the pass restarts), and the run from memory writes the
// records of a run that reads the capture.
func TestOutOfOrderCaptureCached(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var pkts []tracegen.Packet
	for i := range 3000 {
		src := 1 + i%8
		at := units.Time(i)*200*units.Nanosecond + units.Time(rng.IntN(3000))*units.Nanosecond // up to 3 us late
		pkts = append(pkts, tracegen.Packet{Time: at, Src: addr("10.0.0." + strconv.Itoa(src)), Dst: addr("10.0.4." + strconv.Itoa(1+i%5)),
			Proto: layers.IPProtocolUDP, SrcPort: uint16(1000 + i%13), DstPort: 9, Length: 1500})
	}
	trace := writeTrace(t, pkts)
	dir := t.TempDir()
	var runs [2]*Prepared
	for i, cache := range []int64{0, NoCache} {
		pr, err := Prepare(Options{Traces: []string{trace}, Version: "test", Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		if pr.Summary.Files[0].InOrder || pr.Summary.Unicast != 3000 {
			t.Fatalf("in order %v, %d packets: the trace should be out of order", pr.Summary.Files[0].InOrder, pr.Summary.Unicast)
		}
		runs[i] = pr
	}
	if !runs[0].Cached() || runs[1].Cached() {
		t.Fatalf("cached %v and %v", runs[0].Cached(), runs[1].Cached())
	}
	a, err := runs[0].Run(filepath.Join(dir, "memory"), "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := runs[1].Run(filepath.Join(dir, "read"), "")
	if err != nil {
		t.Fatal(err)
	}
	sameRuns(t, dir, "memory", "read", a, b)
}
