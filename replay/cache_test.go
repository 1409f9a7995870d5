package replay

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/internal/config"
)

// A replay from a trace cache writes the records a replay that reads the capture
// writes, byte for byte, whatever the point's speedup and transport settings: open
// and closed loop (every captured control packet replaced, or only RoCE's with TCP
// open loop), idle gaps shortened, IPv4 and IPv6 flows, intra-host packets.
func TestCachedTraceEqualsStreamed(t *testing.T) {
	if testing.Short() {
		t.Skip("replays of three traces")
	}
	load := func(sets ...string) *config.Config {
		cfg, _, err := config.Load("", sets)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	for _, trace := range []string{"incast.pcap", "tcp-incast.pcap", "mixed.pcap"} {
		path := filepath.Join("..", "testdata", "pcaps", trace)
		base := Options{Traces: []string{path}, Config: load(), Version: "test", MaxIdle: 500 * time.Microsecond}
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
			if err := pr.CacheTrace(1 << 30); err != nil {
				t.Fatal(err)
			}
			if n := int64(len(pr.cache.packets)); n != pr.Summary.IPPackets()-pr.Summary.Skipped["multicast"] || n*CacheEntryBytes > pr.CacheBytes() {
				t.Fatalf("%s: %d packets cached, the summary says %d replayed (%d bytes estimated)", trace, n, pr.Summary.IPPackets(), pr.CacheBytes())
			}
		}
		for _, tc := range []struct {
			name    string
			from    *Prepared
			cfg     *config.Config
			speedup float64
		}{
			{"open", open, load(), 1},
			{"open, flowlets, speedup 3", open, load("LoadBalancingMethod=flowlet"), 3},
			{"closed", closed, load("Transport.Mode=closed"), 1},
			{"closed, TCP open loop, speedup 0.5", closed, load("Transport.Mode=closed", "Transport.Tcp=open"), 0.5},
			{"closed, RoCE open loop, 8MiB", closed, load("Transport.Mode=closed", "Transport.Roce=open", "BufferSize=8MiB"), 1},
		} {
			t.Run(trace+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				d, err := tc.from.Derive(tc.cfg, tc.speedup)
				if err != nil {
					t.Fatal(err)
				}
				if d.cache == nil {
					t.Fatal("the derived Prepared has no cache")
				}
				a, err := d.Run(filepath.Join(dir, "cached"), "")
				if err != nil {
					t.Fatal(err)
				}
				o := base
				o.Config, o.Speedup = tc.cfg, tc.speedup
				fresh, err := Prepare(o)
				if err != nil {
					t.Fatal(err)
				}
				b, err := fresh.Run(filepath.Join(dir, "streamed"), "")
				if err != nil {
					t.Fatal(err)
				}
				if a.Simulation.Injected == 0 || a.Simulation.Injected != b.Simulation.Injected || a.Transport != b.Transport ||
					string(a.Trace) != string(b.Trace) {
					t.Errorf("cached: injected %d, %s; streamed %d, %s\ntrace %s\n   vs %s", a.Simulation.Injected, a.Transport,
						b.Simulation.Injected, b.Transport, a.Trace, b.Trace)
				}
				if len(a.Records) != len(b.Records) {
					t.Fatalf("record files %v and %v", a.Records, b.Records)
				}
				for name := range a.Records {
					x, errx := os.ReadFile(filepath.Join(dir, "cached", name))
					y, erry := os.ReadFile(filepath.Join(dir, "streamed", name))
					if errx != nil || erry != nil {
						t.Fatalf("%s: %v %v", name, errx, erry)
					}
					if !bytes.Equal(x, y) {
						t.Errorf("%s differs between the cached and the streamed replay", name)
					}
				}
			})
		}
	}
}

// A cache larger than allowed is refused (and the replay reads the capture); an
// interrupted replay from a cache stops with the context's error.
func TestCacheLimitAndInterrupt(t *testing.T) {
	pr, err := Prepare(Options{Traces: []string{incastTrace}, Version: "test"})
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
