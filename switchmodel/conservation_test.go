package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// heldBy counts the packets (PFC frames apart) that partition v's nodes hold in
// their queues, forwarding lines and links (a cut link's frames in the receiver's
// rxFlight), walking its arena's lists.
func heldBy(v *Network, part int32) int64 {
	var n int64
	walk := func(q *fifo) {
		for id := q.head; id != NoPacket; {
			p := v.arena.get(id)
			id = p.next
			if p.Class != classPFC {
				n++
			}
		}
	}
	for _, nd := range v.nodes {
		c := nd.core()
		if v.par.of[c.id] != part {
			continue
		}
		for _, pt := range c.ports {
			for tc := range pt.tc {
				walk(&pt.ctl[tc])
				walk(&pt.tc[tc].q)
			}
			walk(&pt.fwd)
			walk(&pt.flight)
			walk(&pt.rxFlight)
		}
	}
	return n
}

// Conservation per partition at every barrier (docs/parallel.md section 6, test 4):
// what a partition injected plus what it received from cut links is what it
// delivered, dropped, sent into cut links and holds; summed over the partitions, the
// network's counters. The partitions of the pod plan and of a random plan of 3, on
// the traffic of TestPartitionedMatchesSequential (drops and PFC included).
func TestPartitionedConservation(t *testing.T) {
	barriers, crossed := 0, int64(0)
	barrierCheck = func(views []*Network) {
		barriers++
		for p, v := range views {
			in := v.injected + v.par.cutIn
			out := v.delivered + v.par.cutOut + heldBy(v, int32(p))
			for _, d := range v.dropped {
				out += d
			}
			for c := range v.ctl {
				in += v.ctl[c].Injected
				out += v.ctl[c].Delivered
				for _, d := range v.ctl[c].Dropped {
					out += d
				}
			}
			if in != out {
				t.Fatalf("barrier %d, partition %d: injected %d + cut in %d != delivered %d + dropped %v + cut out %d + held %d",
					barriers, p, v.injected, v.par.cutIn, v.delivered, v.dropped, v.par.cutOut, heldBy(v, int32(p)))
			}
			crossed += v.par.cutIn
		}
	}
	defer func() { barrierCheck = nil }()
	for _, plan := range []func(c *clos) ([]int32, int, units.Time){
		func(c *clos) ([]int32, int, units.Time) { return byName(c, podOf), 2, 500 * units.Nanosecond },
		func(c *clos) ([]int32, int, units.Time) {
			return byName(c, func(n string) int32 { return int32(len(n) % 3) }), 3, 500 * units.Nanosecond
		},
	} {
		barriers, crossed = 0, 0
		r := runClosMode(t, plan, true)
		if barriers < 100 || crossed == 0 || r.c.DroppedTotal() == 0 {
			t.Fatalf("%d barriers, %d packets crossed, %d dropped: the check did not bite", barriers, crossed, r.c.DroppedTotal())
		}
	}
}
