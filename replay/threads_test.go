package replay

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// threadsRun runs trace with --threads n and returns its output directory and its
// run.json.
func threadsRun(t *testing.T, trace string, n int, mutate func(*Options)) (string, *records.Run) {
	t.Helper()
	run, out := runTraceAbs(t, trace, func(o *Options) {
		o.Threads = n
		if mutate != nil {
			mutate(o)
		}
	})
	return out, run
}

// sameRecords fails unless a and b hold the same .arrow files byte for byte and
// the same run.json but for the timing fields and simulation.threads.
func sameRecords(t *testing.T, a, b string) {
	t.Helper()
	list := func(dir string) []string {
		m, err := filepath.Glob(filepath.Join(dir, "*.arrow"))
		if err != nil {
			t.Fatal(err)
		}
		for i := range m {
			m[i] = filepath.Base(m[i])
		}
		sort.Strings(m)
		return m
	}
	fa, fb := list(a), list(b)
	if !reflect.DeepEqual(fa, fb) || len(fa) == 0 {
		t.Fatalf("record files %v and %v", fa, fb)
	}
	for _, f := range fa {
		da, err := os.ReadFile(filepath.Join(a, f))
		if err != nil {
			t.Fatal(err)
		}
		db, err := os.ReadFile(filepath.Join(b, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(da, db) {
			t.Errorf("%s differs (%d and %d bytes)", f, len(da), len(db))
		}
	}
	ja, jb := runJSONMap(t, a), runJSONMap(t, b)
	if !reflect.DeepEqual(ja, jb) {
		for k := range ja {
			if !reflect.DeepEqual(ja[k], jb[k]) {
				t.Errorf("run.json %s: %v and %v", k, ja[k], jb[k])
			}
		}
	}
}

func runJSONMap(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, records.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"command", "started", "finished"} {
		delete(m, k)
	}
	if sim, ok := m["simulation"].(map[string]any); ok {
		for _, k := range []string{"wall_s", "cpu_s", "threads"} {
			delete(sim, k)
		}
	}
	return m
}

// Every committed trace, open loop, gives the same records with --threads 1, 2, 3
// and 8, and the runs with more than one thread are partitioned (run.json says so).
func TestThreadsIdentity(t *testing.T) {
	traces, err := filepath.Glob(repoPath(t, "testdata/pcaps/*.pcap"))
	if err != nil || len(traces) == 0 {
		t.Fatal(traces, err)
	}
	for _, tr := range traces {
		t.Run(filepath.Base(tr), func(t *testing.T) {
			base, r1 := threadsRun(t, tr, 1, nil)
			if th := r1.Simulation.Threads; th == nil || th.Used != 1 {
				t.Fatalf("--threads 1: threads %+v", th)
			}
			for _, n := range []int{2, 3, 8} {
				dir, rn := threadsRun(t, tr, n, nil)
				th := rn.Simulation.Threads
				if th == nil || th.Asked != n || th.Used < 2 {
					t.Errorf("--threads %d: threads %+v, want partitioned", n, th)
				}
				sameRecords(t, base, dir)
			}
		})
	}
}

// With --record-packets and --oversize drop and a short message gap, too.
// sameOnTwoThreads replays the committed trace tr (a repository path) with mutate on
// 1 and on 2 threads: the second must run partitioned, with the same records.
func sameOnTwoThreads(t *testing.T, tr string, mutate func(*Options)) {
	t.Helper()
	base, _ := threadsRun(t, repoPath(t, tr), 1, mutate)
	dir, rn := threadsRun(t, repoPath(t, tr), 2, mutate)
	if th := rn.Simulation.Threads; th == nil || th.Used != 2 {
		t.Errorf("%s: threads %+v", tr, th)
	}
	sameRecords(t, base, dir)
}

func TestThreadsIdentityOptions(t *testing.T) {
	for _, tr := range []string{"testdata/pcaps/mixed.pcap", "testdata/pcaps/reqresp.pcap", "testdata/pcaps/incast.pcap"} {
		mut := func(o *Options) {
			cfg := config.Default()
			cfg.Transport.MessageGap = 2000 // ns
			o.Config = &cfg
			o.RecordPackets = true
			o.Oversize = OversizeDrop
		}
		sameOnTwoThreads(t, tr, mut)
	}
}

// From the trace cache (--replicate: the copies merged, the feed prepared from
// memory) and with an idle clock and a time window.
func TestThreadsIdentityCache(t *testing.T) {
	for _, mut := range []func(*Options){
		func(o *Options) { o.Replicate = []int{3}; o.Hosts = "hash" },
		func(o *Options) { o.MaxIdle = 20 * time.Microsecond; o.Cache = NoCache },
	} {
		for _, tr := range []string{"testdata/pcaps/demo.pcap", "testdata/pcaps/reqresp.pcap"} {
			sameOnTwoThreads(t, tr, mut)
		}
	}
}

// A fabric whose cut links have unequal delays (leaf-0 and leaf-1 reach the spines
// over 5 us, leaf-2 and leaf-3 over 1.2 us, the hosts 0.7 us): the lookahead is the
// smallest cut delay, and the records are those of the sequential run.
func TestThreadsUnequalDelays(t *testing.T) {
	topo := filepath.Join(t.TempDir(), "unequal.yaml")
	if err := os.WriteFile(topo, []byte(`Switches:
  - {Role: leaf, Count: 4, Name: "leaf-{i}"}
  - {Role: spine, Count: 2, Name: "spine-{i}"}
Hosts:
  - {Switches: leaf, PerSwitch: 16, Name: "{switch}-h{i}", Link: {Speed: 100Gbps, PropagationDelay: 700ns}}
Links:
  - {From: leaf-0, To: "spine-*", Speed: 100Gbps, PropagationDelay: 5us}
  - {From: leaf-1, To: "spine-*", Speed: 100Gbps, PropagationDelay: 5us}
  - {From: leaf-2, To: "spine-*", Speed: 100Gbps, PropagationDelay: 1200ns}
  - {From: leaf-3, To: "spine-*", Speed: 100Gbps, PropagationDelay: 1200ns}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// incast.pcap pauses a spine long enough for a PFC deadlock check, which the
	// partitioned engine does not make yet: the run is made again sequentially.
	for _, tr := range []string{"testdata/pcaps/demo.pcap", "testdata/pcaps/incast.pcap", "testdata/pcaps/many-flows.pcap"} {
		retried := tr == "testdata/pcaps/incast.pcap"
		mut := func(o *Options) {
			cfg := config.Default()
			cfg.Topology.File = topo
			o.Config = &cfg
			o.Hosts = "hash"
		}
		base, _ := threadsRun(t, repoPath(t, tr), 1, mut)
		for _, n := range []int{2, 3} {
			dir, rn := threadsRun(t, repoPath(t, tr), n, mut)
			th := rn.Simulation.Threads
			switch {
			case th == nil:
				t.Fatalf("%s: no threads in run.json", tr)
			case retried && (th.Used != 1 || th.Asked != n || !strings.Contains(th.Reason, "PFC deadlock")):
				t.Errorf("%s --threads %d: threads %+v, want run again sequentially for a deadlock check", tr, n, th)
			case !retried && th.Used < 2:
				t.Errorf("%s --threads %d: threads %+v", tr, n, th)
			}
			sameRecords(t, base, dir)
		}
	}
}

// The committed topology files (stages.arrow with five-stage's stages, graph plans
// for the files that are not Clos), with two traces, give the records of the
// sequential run with --threads 2 and 3.
func TestThreadsTopologies(t *testing.T) {
	files, err := filepath.Glob(repoPath(t, "testdata/topologies/*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	parted, n := 0, 0
	for _, topo := range files {
		if data, err := os.ReadFile(topo); err != nil || bytes.Contains(data, []byte("Profile")) {
			continue // its switch profiles are the configuration's: not the default's
		}
		n++
		for _, tr := range []string{"testdata/pcaps/demo.pcap", "testdata/pcaps/many-flows.pcap"} {
			t.Run(filepath.Base(topo)+"/"+filepath.Base(tr), func(t *testing.T) {
				mut := func(o *Options) {
					cfg := config.Default()
					cfg.Topology.File = topo
					o.Config = &cfg
					o.Hosts = "hash"
				}
				base, _ := threadsRun(t, repoPath(t, tr), 1, mut)
				for _, n := range []int{2, 3} {
					dir, rn := threadsRun(t, repoPath(t, tr), n, mut)
					if th := rn.Simulation.Threads; th.Used > 1 {
						parted++
					} else {
						t.Logf("--threads %d: sequential: %s", n, th.Reason)
					}
					sameRecords(t, base, dir)
				}
			})
		}
	}
	if n < 4 || parted < n {
		t.Errorf("%d partitioned runs of %d topologies x 2 traces x 2 thread counts", parted, n)
	}
}

// A run that leaves packets undrained at --max-drain (1 us after the last arrival)
// ends partitioned, with the sequential run's records: the undrained packets in
// flows.arrow and run.json, their paths with --record-packets; open and closed loop.
func TestThreadsUndrained(t *testing.T) {
	for _, c := range []struct {
		tr     string
		closed bool
	}{{"testdata/pcaps/many-flows.pcap", false}, {"testdata/pcaps/mixed.pcap", false}, {"testdata/pcaps/mixed.pcap", true}, {"testdata/pcaps/tcp-incast.pcap", true}} {
		tr := c.tr
		mut := func(o *Options) {
			if c.closed {
				closedOpts(o)
			}
			o.MaxDrain = units.Microsecond
			o.RecordPackets = true
		}
		base, r1 := threadsRun(t, repoPath(t, tr), 1, mut)
		if r1.Simulation.UndrainedTotal() == 0 {
			t.Fatalf("%s: drained; the test needs packets left", tr)
		}
		for _, n := range []int{2, 3, 8} {
			dir, rn := threadsRun(t, repoPath(t, tr), n, mut)
			if th := rn.Simulation.Threads; th == nil || th.Used < 2 {
				t.Errorf("%s --threads %d: threads %+v, want partitioned", tr, n, th)
			}
			sameRecords(t, base, dir)
		}
	}
}

// Every committed trace, closed loop (the default TCP senders, Causality captured),
// gives the same records with --threads 1, 2, 3 and 8, and the runs asked for 2+ are
// partitioned (run.json simulation.threads.used).
func TestThreadsIdentityClosed(t *testing.T) {
	traces, err := filepath.Glob(repoPath(t, "testdata/pcaps/*.pcap"))
	if err != nil || len(traces) == 0 {
		t.Fatal(traces, err)
	}
	for _, tr := range traces {
		t.Run(filepath.Base(tr), func(t *testing.T) {
			base, r1 := threadsRun(t, tr, 1, closedOpts)
			if th := r1.Simulation.Threads; th == nil || th.Used != 1 {
				t.Fatalf("--threads 1: threads %+v", th)
			}
			for _, n := range []int{2, 3, 8} {
				dir, rn := threadsRun(t, tr, n, closedOpts)
				th := rn.Simulation.Threads
				if th == nil || th.Asked != n || th.Used < 2 {
					t.Errorf("--threads %d: threads %+v, want partitioned", n, th)
				}
				sameRecords(t, base, dir)
			}
		})
	}
}
