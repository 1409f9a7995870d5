package switchmodel

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// injectAll queues every spec with InjectAt (the feed's way: injection class, each
// packet's index its position).
func injectAll(n *Network, specs []pktSpec) {
	keys := map[FlowKey]KeyID{}
	for i, s := range specs {
		id, p := n.NewPacket()
		p.TraceIndex = int64(i)
		p.FlowID = s.flow
		p.Src, p.Dst = s.src, s.dst
		p.Length = s.length
		p.DSCP = s.dscp
		p.ECN = s.ecn
		p.Key = keyID(n, keys, s.key)
		n.InjectAt(s.at, n.Hosts()[s.src], id)
	}
}

// parResult is what a run leaves: the digest of every observation in order, the
// counters and every port's statistics.
type parResult struct {
	digest uint64
	obs    int
	c      Counters
	ports  []string
	stats  ParallelStats
}

// runClosPartitioned replays randomTraffic through smallClos (no buffer samples:
// the sampler is not partitioned yet) sequentially (of nil) or partitioned by of.
func runClosPartitioned(t *testing.T, of func(c *clos) ([]int32, int, units.Time)) parResult {
	t.Helper()
	o := &hashObs{h: fnv.New64a()}
	c := buildClos(t, smallClos, 3, Observers{o, o, nil, o, o})
	injectAll(c.net, randomTraffic(11, len(c.hosts), 8000, 20*units.Microsecond))
	var r parResult
	if of == nil {
		c.eng.Run()
	} else {
		parts, n, L := of(c)
		st, err := c.net.RunPartitioned(parts, n, L)
		if err != nil {
			t.Fatal(err)
		}
		r.stats = st
	}
	checkDrained(t, c.net)
	r.digest, r.obs, r.c = o.h.Sum64(), o.n, c.net.Counters()
	for _, nd := range c.net.Nodes() {
		for i := range nd.NumPorts() {
			r.ports = append(r.ports, fmt.Sprint(nd.Name(), i, nd.PortStats(i)))
		}
	}
	return r
}

// byName assigns partitions from a node's name.
func byName(c *clos, f func(name string) int32) []int32 {
	of := make([]int32, len(c.net.Nodes()))
	for i, nd := range c.net.Nodes() {
		of[i] = f(nd.Name())
	}
	return of
}

func podOf(name string) int32 {
	if strings.Contains(name, "-p1") {
		return 1
	}
	return 0
}

// docs/parallel.md: the partitioned engine gives the sequential engine's records
// (every observation in order, hashed), counters (events included) and port
// statistics, for any partition: by pod with the spines spread (cut links: fabric to
// spine, 2 us), pods and spines apart, three and eight partitions, and random
// assignments of every node (hosts apart from their racks too; lookahead the smallest
// cut delay, 500 ns), PFC, drops and ECN marks included.
func TestPartitionedMatchesSequential(t *testing.T) {
	want := runClosPartitioned(t, nil)
	if want.c.PFCFrames == 0 || want.c.CEMarked == 0 || want.c.DroppedTotal() == 0 {
		t.Fatalf("the traffic should pause, mark and drop: %+v", want.c)
	}
	cases := []struct {
		name string
		of   func(c *clos) ([]int32, int, units.Time)
	}{
		{"pods, spines spread", func(c *clos) ([]int32, int, units.Time) {
			return byName(c, func(n string) int32 {
				if strings.HasPrefix(n, "spine") {
					return int32(n[len(n)-1]-'0') % 2
				}
				return podOf(n)
			}), 2, 2 * units.Microsecond
		}},
		{"pods and spines apart", func(c *clos) ([]int32, int, units.Time) {
			return byName(c, func(n string) int32 {
				if strings.HasPrefix(n, "spine") {
					return 2
				}
				return podOf(n)
			}), 3, 2 * units.Microsecond
		}},
	}
	for _, parts := range []int{2, 3, 8} {
		for seed := range uint64(2) {
			cases = append(cases, struct {
				name string
				of   func(c *clos) ([]int32, int, units.Time)
			}{fmt.Sprintf("random %d seed %d", parts, seed), func(c *clos) ([]int32, int, units.Time) {
				rng := rand.New(rand.NewPCG(seed, uint64(parts)))
				of := make([]int32, len(c.net.Nodes()))
				for i := range of {
					of[i] = int32(rng.IntN(parts))
				}
				return of, parts, 500 * units.Nanosecond
			}})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := runClosPartitioned(t, tc.of)
			if got.digest != want.digest || got.obs != want.obs {
				t.Errorf("observations %x (%d), sequential %x (%d)", got.digest, got.obs, want.digest, want.obs)
			}
			if got.c != want.c {
				t.Errorf("counters %+v\nsequential %+v", got.c, want.c)
			}
			if !slices.Equal(got.ports, want.ports) {
				t.Error("port statistics differ")
			}
			var sum uint64
			for _, e := range got.stats.Events {
				sum += e
			}
			if sum != want.c.Events || got.stats.Windows == 0 || got.stats.CutFrames == 0 {
				t.Errorf("stats %+v: events %d, want %d; windows and cut frames > 0", got.stats, sum, want.c.Events)
			}
			t.Logf("%d windows, %d cut frames, events by partition %v", got.stats.Windows, got.stats.CutFrames, got.stats.Events)
		})
	}
}

// A cut link shorter than the lookahead, a sampler, a pending global event: refused,
// and nothing ran.
func TestPartitionedRefuses(t *testing.T) {
	o := &hashObs{h: fnv.New64a()}
	c := buildClos(t, smallClos, 3, Observers{o, o, nil, o, o})
	injectAll(c.net, randomTraffic(11, len(c.hosts), 100, units.Millisecond))
	all1 := make([]int32, len(c.net.Nodes()))
	for i := range all1 {
		all1[i] = int32(i % 2)
	}
	if _, err := c.net.RunPartitioned(all1, 2, 600*units.Nanosecond); !errors.Is(err, ErrNotPartitioned) || !strings.Contains(err.Error(), "delay") {
		t.Fatalf("err %v, want a cut link's delay below the lookahead", err)
	}
	at(c.eng, 5, func(units.Time) {})
	if _, err := c.net.RunPartitioned(all1, 2, 500*units.Nanosecond); !errors.Is(err, ErrNotPartitioned) || !strings.Contains(err.Error(), "global") {
		t.Fatalf("err %v, want the pending global event", err)
	}
	if c.eng.Pending() != 101 || c.eng.Processed() != 0 {
		t.Fatalf("pending %d processed %d after the refusals, want 101 and 0", c.eng.Pending(), c.eng.Processed())
	}
	c.eng.Run()
	checkDrained(t, c.net)

	o2 := &hashObs{h: fnv.New64a()}
	c2 := buildClos(t, smallClos, 3, Observers{o2, o2, o2, o2, o2})
	if _, err := c2.net.RunPartitioned(make([]int32, len(c2.net.Nodes())), 1, units.Microsecond); !errors.Is(err, ErrNotPartitioned) || !strings.Contains(err.Error(), "sampler") {
		t.Fatalf("err %v, want buffer samplers refused", err)
	}
}
