package analysis_test

import (
	"fmt"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/records"
)

// One equal-cost set of four members: one member carries half the flows.
func ExampleImbalance() {
	b := analysis.Imbalance([]float64{20, 10, 10, 0})
	fmt.Printf("max/mean %.2f  CoV %.3f  Jain %.3f  idle %.2f  chi2 %.1f  p %.4f\n",
		b.MaxMean, b.CoV, b.Jain, b.IdleFraction, b.Chi2, b.Chi2P)
	// Output:
	// max/mean 2.00  CoV 0.707  Jain 0.667  idle 0.25  chi2 20.0  p 0.0002
}

// The rack's choice determines the fabric's: fully polarized.
func ExampleNMI() {
	rack := []int{0, 1, 2, 3, 0, 1, 2, 3}
	fabric := []int{0, 1, 2, 3, 0, 1, 2, 3}
	fmt.Printf("%.2f\n", analysis.NMI(rack, fabric).NMI)
	// Output:
	// 1.00
}

// A rack pauses a fabric switch, which, paused, pauses a spine: a storm of depth 2.
func ExampleEpisodes() {
	nodes := analysis.Nodes{"rack-p0-r0", "fabric-p0-f0", "spine-s0-0"} // NodeIDs 0, 1, 2
	events := []analysis.PFCEvent{
		{TimePs: 0, Node: 1, Port: 0, Peer: 0, TC: 3, Kind: records.EventRxPause, Quanta: 65535},
		{TimePs: 1_000_000, Node: 2, Port: 0, Peer: 1, TC: 3, Kind: records.EventRxPause, Quanta: 65535},
		{TimePs: 5_000_000, Node: 2, Port: 0, Peer: 1, TC: 3, Kind: records.EventRxResume},
		{TimePs: 8_000_000, Node: 1, Port: 0, Peer: 0, TC: 3, Kind: records.EventRxResume},
	}
	intervals, err := analysis.PauseIntervals(events, 10_000_000)
	if err != nil {
		panic(err)
	}
	for _, e := range analysis.Episodes(intervals, nodes, analysis.DefaultStormDurationPs) {
		fmt.Printf("start %d ps, %d ps, %d ports, depth %d, root %s, storm %v\n", e.StartPs, e.DurationPs, e.Ports, e.Depth, e.Root, e.Storm)
	}
	// Output:
	// start 0 ps, 8000000 ps, 2 ports, depth 2, root rack-p0-r0, storm true
}

// The p99 of a delay histogram, interpolated inside its bucket.
func ExampleDelayQuantile() {
	buckets := []analysis.DelayBucket{{LoPs: 0, HiPs: 1000, Packets: 90}, {LoPs: 1000, HiPs: 2000, Packets: 10}}
	fmt.Println(analysis.DelayQuantile(buckets, 0.99))
	// Output:
	// 1900
}

// A run without drops, pauses or marks: the headline says in one line that nothing
// congested, instead of printing zeros.
func ExampleAnalyze() {
	run := &analysis.Run{
		Info:  analysis.RunInfo{SimPs: 1_000_000_000, Injected: 1000, Delivered: 1000, Complete: true},
		Nodes: analysis.Nodes{"rack-p0-r0"},
		Sets: []analysis.SetLoad{
			{Node: 0, Tier: records.TierRack, Uplinks: true, Bytes: []float64{3000, 1000}, Flows: []float64{6, 4}},
		},
	}
	s, err := analysis.Analyze(run, analysis.DefaultOptions())
	if err != nil {
		panic(err)
	}
	for _, line := range s.Headline {
		fmt.Println(line)
	}
	// Output:
	// Nothing congested: no drop, PFC pause or ECN mark; the ports hold no host link's load.
	// Worst ECMP imbalance at the rack tier: the busiest of rack-p0-r0 uplinks carries 1.50x the mean member load in bytes (tier: max/mean 1.50, Jain 0.800, idle members 0%, flow chi-square p = 0.527).
}
