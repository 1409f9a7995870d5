package replay

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/records"
)

// A replay from the trace cache writes the records a replay that reads the capture
// writes, byte for byte, whatever the point's speedup, transport settings and copies:
// open and closed loop (every captured control packet replaced, or only RoCE's with
// TCP open loop), idle gaps shortened, IPv4 and IPv6 flows, intra-host packets, two
// captures merged, --replicate with jitter and with a count per trace; run.json's
// trace counts and offered_load (the cache's computed beside the run, the streamed
// one's where the arrivals are prepared) agree.
func TestCachedTraceEqualsStreamed(t *testing.T) {
	if testing.Short() {
		t.Skip("replays of four traces")
	}
	load := func(sets ...string) *config.Config {
		cfg, _, err := config.Load("", sets)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	tr := func(name string) string { return filepath.Join("..", "testdata", "pcaps", name) }
	for _, traces := range [][]string{{tr("incast.pcap")}, {tr("tcp-incast.pcap")}, {tr("mixed.pcap")}, {tr("demo.pcap"), tr("ipv6.pcap")}} {
		name := filepath.Base(traces[0])
		if len(traces) > 1 {
			name += "+" + filepath.Base(traces[1])
		}
		// Runs: the preparations serve the derived runs below (Options.KeepsTrace).
		base := Options{Traces: traces, Config: load(), Version: "test", MaxIdle: 500 * time.Microsecond, Runs: 9}
		if len(traces) > 1 {
			base.Hosts = MapHash // the two captures' endpoints share the hosts
		}
		open, err := Prepare(base)
		if err != nil {
			t.Fatal(err)
		}
		closedOpt := base
		closedOpt.Config = load("Transport.Mode=closed")
		closed, err := Prepare(closedOpt)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range []*Prepared{open, closed} {
			if !pr.Cached() {
				t.Fatalf("%s: Prepare kept no cache", name)
			}
			if n := int64(pr.cache.n); n != pr.Summary.Unicast || pr.CacheBytes() > n*CacheEntryBytes+cacheChunk*CacheEntryBytes+pr.Summary.Flows*CacheFlowBytes {
				t.Fatalf("%s: %d packets cached in %d bytes, the summary says %d replayed", name, n, pr.CacheBytes(), pr.Summary.Unicast)
			}
		}
		perTrace := []int{3}
		if len(traces) > 1 {
			perTrace = []int{1, 3}
		}
		for _, tc := range []struct {
			name      string
			from      *Prepared
			cfg       *config.Config
			speedup   float64
			replicate []int
			jitter    time.Duration
		}{
			{"open", open, load(), 1, nil, 0},
			{"open, flowlets, speedup 3", open, load("LoadBalancingMethod=flowlet"), 3, nil, 0},
			{"open, 3 copies", open, load(), 1, []int{3}, 0},
			{"open, copies per trace, jitter 40us", open, load(), 2, perTrace, 40 * time.Microsecond},
			{"closed", closed, load("Transport.Mode=closed"), 1, nil, 0},
			{"closed, 2 copies", closed, load("Transport.Mode=closed"), 1, []int{2}, time.Microsecond},
			{"closed, TCP open loop, speedup 0.5", closed, load("Transport.Mode=closed", "Transport.Tcp=open"), 0.5, nil, 0},
			{"closed, RoCE open loop, 8MiB", closed, load("Transport.Mode=closed", "Transport.Roce=open", "BufferSize=8MiB"), 1, nil, 0},
			{"closed from open", open, load("Transport.Mode=closed"), 1, nil, 0},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				from := tc.from
				if tc.jitter > 0 {
					o := from.Opt
					o.ReplicateJitter = tc.jitter
					var err error
					if from, err = Prepare(o); err != nil {
						t.Fatal(err)
					}
				}
				d, err := from.DeriveLoad(tc.cfg, tc.speedup, tc.replicate, 0)
				if err != nil {
					t.Fatal(err)
				}
				if !d.Cached() {
					t.Fatal("the derived Prepared has no cache")
				}
				a, err := d.Run(filepath.Join(dir, "cached"), "")
				if err != nil {
					t.Fatal(err)
				}
				o := base
				o.Config, o.Speedup, o.Replicate, o.ReplicateJitter, o.Cache, o.Runs = tc.cfg, tc.speedup, tc.replicate, tc.jitter, NoCache, 0
				fresh, err := Prepare(o)
				if err != nil {
					t.Fatal(err)
				}
				if fresh.Cached() {
					t.Fatal("a Prepared with NoCache has a cache")
				}
				b, err := fresh.Run(filepath.Join(dir, "streamed"), "")
				if err != nil {
					t.Fatal(err)
				}
				sameRuns(t, dir, "cached", "streamed", a, b)
			})
		}
	}
}

// sameRuns fails unless two runs in dir wrote the same record files, trace counts
// (the files' paths aside) and offered load.
func sameRuns(t *testing.T, dir, x, y string, a, b *records.Run) {
	t.Helper()
	paths := regexp.MustCompile(`"path":"[^"]*"`)
	if a.Simulation.Injected == 0 || a.Simulation.Injected != b.Simulation.Injected || a.Transport != b.Transport ||
		paths.ReplaceAllString(string(a.Trace), "") != paths.ReplaceAllString(string(b.Trace), "") {
		t.Errorf("%s: injected %d, %s; %s %d, %s\ntrace %s\n   vs %s", x, a.Simulation.Injected, a.Transport,
			y, b.Simulation.Injected, b.Transport, a.Trace, b.Trace)
	}
	if !reflect.DeepEqual(a.OfferedLoad, b.OfferedLoad) || a.OfferedLoad == nil {
		t.Errorf("offered load %+v, %s %+v", a.OfferedLoad, y, b.OfferedLoad)
	}
	if len(a.Records) != len(b.Records) {
		t.Fatalf("record files %v and %v", a.Records, b.Records)
	}
	for name := range a.Records {
		p, errp := os.ReadFile(filepath.Join(dir, x, name))
		q, errq := os.ReadFile(filepath.Join(dir, y, name))
		if errp != nil || errq != nil {
			t.Fatalf("%s: %v %v", name, errp, errq)
		}
		if !bytes.Equal(p, q) {
			t.Errorf("%s differs between the %s and the %s replay", name, x, y)
		}
	}
}

// A cache larger than allowed is refused (and the replay reads the capture); an
// interrupted replay from a cache stops with the context's error.
func TestCacheLimitAndInterrupt(t *testing.T) {
	pr, err := Prepare(Options{Traces: []string{incastTrace}, Version: "test", Cache: NoCache})
	if err != nil {
		t.Fatal(err)
	}
	need := pr.CacheBytes()
	if err := pr.CacheTrace(need - 1); !errors.Is(err, ErrCacheTooLarge) || pr.cache != nil {
		t.Fatalf("CacheTrace(%d) for %d bytes: %v", need-1, need, err)
	}
	if err := pr.CacheTrace(need); err != nil || pr.cache == nil {
		t.Fatalf("CacheTrace(%d): %v", need, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pr.Opt.Context = ctx
	if _, err := pr.Run(filepath.Join(t.TempDir(), "run"), ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
}
