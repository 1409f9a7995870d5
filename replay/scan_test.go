package replay

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
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

// countOpens counts, while the test runs, the passes that open path (openedHook).
func countOpens(t *testing.T, path string) *int {
	t.Helper()
	var mu sync.Mutex
	n := new(int)
	openedHook = func(p string) {
		if p == path {
			mu.Lock()
			*n++
			mu.Unlock()
		}
	}
	t.Cleanup(func() { openedHook = nil })
	return n
}

// The decodes of one run, counted where ingest opens the file: one pass below the
// cache limit whatever the run asks for (closed loop, idle gaps, copies, a target
// load), one more above it (Options.Cache, NoCache), and one per copy of --replicate
// there (docs/model.md#one-pass-over-the-capture). The records are the same.
func TestDecodesPerRun(t *testing.T) {
	data, err := os.ReadFile(incastTrace)
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "incast.pcap")
	if err := os.WriteFile(trace, data, 0o600); err != nil {
		t.Fatal(err)
	}
	closed, _, err := config.Load("", []string{"Transport.Mode=closed"})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Prepare(Options{Traces: []string{incastTrace}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	need := ref.CacheBytes()
	dir := t.TempDir()
	for i, tc := range []struct {
		name  string
		opt   Options
		cache int64
		want  int
	}{
		{"open", Options{}, 0, 1},
		{"open at the limit", Options{}, need, 1},
		{"open above the limit", Options{}, need - 1, 2},
		{"open no cache", Options{}, NoCache, 2},
		{"closed idle", Options{Config: closed, MaxIdle: time.Microsecond}, 0, 1},
		{"closed idle above the limit", Options{Config: closed, MaxIdle: time.Microsecond}, need - 1, 2},
		{"copies", Options{Replicate: []int{3}}, 0, 1},
		{"copies no cache", Options{Replicate: []int{3}}, NoCache, 4},
		{"target load no cache", Options{Replicate: []int{2}, TargetLoad: 60}, NoCache, 1},
	} {
		x, y := strconv.Itoa(i)+"a", strconv.Itoa(i)+"b"
		t.Run(tc.name, func(t *testing.T) {
			n := countOpens(t, trace)
			opt := tc.opt
			opt.Traces, opt.Version, opt.Cache = []string{trace}, "test", tc.cache
			pr, err := Prepare(opt)
			if err != nil {
				t.Fatal(err)
			}
			if *n != 1 {
				t.Fatalf("Prepare decoded the capture %d times, want 1", *n)
			}
			a, err := pr.Run(filepath.Join(dir, x), "")
			if err != nil {
				t.Fatal(err)
			}
			if *n != tc.want {
				t.Errorf("cached %v: %d decodes for the run, want %d", pr.Cached(), *n, tc.want)
			}
			// The same run, with every run reading the capture from memory (Cache 0)
			// or from the file (NoCache, unless --target-load keeps it): same records.
			other := opt
			other.Traces = []string{incastTrace}
			if pr.Cached() {
				other.Cache = NoCache
			} else {
				other.Cache = 0
			}
			po, err := Prepare(other)
			if err != nil {
				t.Fatal(err)
			}
			b, err := po.Run(filepath.Join(dir, y), "")
			if err != nil {
				t.Fatal(err)
			}
			sameRuns(t, dir, x, y, a, b)
		})
	}
}
