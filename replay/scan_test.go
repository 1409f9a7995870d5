package replay

import (
	"bytes"
	"compress/gzip"
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

// gzipCopy writes a gzip-compressed copy of trace to dir and returns its path.
func gzipCopy(t *testing.T, trace, dir string) string {
	t.Helper()
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	z.Write(data)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, filepath.Base(trace)+".gz")
	if err := os.WriteFile(out, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// The memory rule (docs/model.md#one-pass-over-the-capture): the compact form is kept,
// up to Options.Cache, when the capture cannot be read again for the cost of decoding
// it alone (compressed, or from standard input kept as a file: that one can) or the
// run replays it more than once (copies, a target load, several runs); one run of a
// plain file streams it a second time. --target-load keeps it whatever the limit. A
// run from memory and one that streams the file write the same records.
func TestCacheRule(t *testing.T) {
	gz := gzipCopy(t, incastTrace, t.TempDir())
	// The size, from the capture's counts (tcp-incast.pcap: every packet unicast).
	probe, err := Prepare(Options{Traces: []string{gz}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	need := probe.Summary.Unicast*CacheEntryBytes + probe.Summary.UnicastFlows*CacheFlowBytes
	if !probe.Cached() || probe.CacheBytes() != need || probe.Summary.Unicast == 0 {
		t.Fatalf("cached %v in %d bytes; %d packets and %d flows", probe.Cached(), probe.CacheBytes(), probe.Summary.Unicast, probe.Summary.UnicastFlows)
	}
	stdin, err := os.Open(incastTrace)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	for _, tc := range []struct {
		name      string
		trace     string
		cache     int64
		target    float64
		replicate []int
		runs      int
		cached    bool
		over      bool // the rule kept it, the limit dropped it
	}{
		{"plain", incastTrace, 0, 0, nil, 0, false, false},
		{"plain, one copy", incastTrace, 0, 0, []int{1}, 0, false, false},
		{"plain, 2 copies", incastTrace, 0, 0, []int{2}, 0, true, false},
		{"plain, 2 copies above the limit", incastTrace, need - 1, 0, []int{2}, 0, false, true},
		{"plain, one run", incastTrace, 0, 0, nil, 1, false, false},
		{"plain, 2 runs", incastTrace, 0, 0, nil, 2, true, false},
		{"plain, 2 runs at the limit", incastTrace, need, 0, nil, 2, true, false},
		{"plain, 2 runs no cache", incastTrace, NoCache, 0, nil, 2, false, false},
		{"plain, target load no cache", incastTrace, NoCache, 50, nil, 0, true, false},
		{"standard input", "-", 0, 0, nil, 0, false, false},
		{"gzip", gz, 0, 0, nil, 0, true, false},
		{"gzip at the limit", gz, need, 0, nil, 0, true, false},
		{"gzip above the limit", gz, need - 1, 0, nil, 0, false, true},
		{"gzip no cache", gz, NoCache, 0, nil, 0, false, false},
		{"gzip, target load above the limit", gz, need - 1, 50, nil, 0, true, false},
	} {
		pr, err := Prepare(Options{Traces: []string{tc.trace}, Version: "test", Cache: tc.cache, TargetLoad: tc.target,
			Replicate: tc.replicate, Runs: tc.runs, Stdin: stdin})
		if err != nil {
			t.Fatal(err)
		}
		if pr.Cached() != tc.cached || pr.OverCache() != tc.over {
			t.Errorf("%s: cached %v, over the limit %v; want %v, %v", tc.name, pr.Cached(), pr.OverCache(), tc.cached, tc.over)
		}
	}
	dir := t.TempDir()
	kept, err := Prepare(Options{Traces: []string{incastTrace}, Version: "test", Runs: 2})
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := Prepare(Options{Traces: []string{incastTrace}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !kept.Cached() || streamed.Cached() {
		t.Fatalf("cached %v and %v", kept.Cached(), streamed.Cached())
	}
	a, err := kept.Run(filepath.Join(dir, "memory"), "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := streamed.Run(filepath.Join(dir, "read"), "")
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
		// Runs 2 keeps the trace in memory below the limit (Options.KeepsTrace).
		pr, err := Prepare(Options{Traces: []string{trace}, Version: "test", Cache: cache, Runs: 2})
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

// The decodes of one run, counted where ingest opens the file
// (docs/model.md#one-pass-over-the-capture): Prepare's pass, then for one run of a
// plain file a second pass that streams it (whatever the run asks for: closed loop,
// idle gaps) and one per copy of --replicate without the cache; nothing more when the
// trace is kept (copies, a target load, several runs, a compressed file below the
// limit), one more above the limit. The records are those of the same run the other
// way.
func TestDecodesPerRun(t *testing.T) {
	data, err := os.ReadFile(incastTrace)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	trace := filepath.Join(tmp, "incast.pcap")
	if err := os.WriteFile(trace, data, 0o600); err != nil {
		t.Fatal(err)
	}
	gz := gzipCopy(t, incastTrace, tmp)
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
		trace string
		opt   Options
		cache int64
		want  int
	}{
		{"open", trace, Options{}, 0, 2},
		{"open no cache", trace, Options{}, NoCache, 2},
		{"closed idle", trace, Options{Config: closed, MaxIdle: time.Microsecond}, 0, 2},
		{"two runs", trace, Options{Runs: 2}, 0, 1},
		{"two runs above the limit", trace, Options{Runs: 2}, need - 1, 2},
		{"copies", trace, Options{Replicate: []int{3}}, 0, 1},
		{"copies no cache", trace, Options{Replicate: []int{3}}, NoCache, 4},
		{"target load no cache", trace, Options{Replicate: []int{2}, TargetLoad: 60}, NoCache, 1},
		{"gzip", gz, Options{}, 0, 1},
		{"gzip closed idle", gz, Options{Config: closed, MaxIdle: time.Microsecond}, 0, 1},
		{"gzip above the limit", gz, Options{}, need - 1, 2},
	} {
		x, y := strconv.Itoa(i)+"a", strconv.Itoa(i)+"b"
		t.Run(tc.name, func(t *testing.T) {
			n := countOpens(t, tc.trace)
			opt := tc.opt
			opt.Traces, opt.Version, opt.Cache = []string{tc.trace}, "test", tc.cache
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
			// The same run the other way: from memory (Runs 2 keeps it) or from the
			// file (NoCache, unless --target-load keeps it): same records.
			other := opt
			if pr.Cached() {
				other.Cache, other.Runs = NoCache, 0
			} else {
				other.Cache, other.Runs = 0, 2
			}
			po, err := Prepare(other)
			if err != nil {
				t.Fatal(err)
			}
			if po.Cached() == pr.Cached() && opt.TargetLoad == 0 {
				t.Fatalf("both runs cached %v", pr.Cached())
			}
			b, err := po.Run(filepath.Join(dir, y), "")
			if err != nil {
				t.Fatal(err)
			}
			sameRuns(t, dir, x, y, a, b)
		})
	}
}
