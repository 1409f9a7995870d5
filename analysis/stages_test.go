package analysis

import (
	"math"
	"testing"
)

// TestStagePolarizationsByHand: 45 flows over three ECMP stages, built so that the
// measures are known without the code: stage 1 takes member i mod 2 at switch 10,
// stage 2 member (i/2) mod 2 at switch 20 + (i mod 2), stage 3 the stage-2 member
// at switch 30, for flows 0..39; flows 40..44 stop after stage 1. Stages 1 and 2:
// every pair of members 10 times, I = 0 exactly (NMI 0, AMI slightly negative, the
// chance agreement removed). Stages 2 and 3: the same member, I = H = ln 2 (NMI 1,
// AMI 1), also within each of the two stage-2 switches.
func TestStagePolarizationsByHand(t *testing.T) {
	const n = 45
	ft := &FlowTable{Flows: make([]FlowSample, n), Stages: newStageTable(n, 3, true)}
	for i := range n {
		ft.Stages.set(i, 1, 10, int32(i%2))
		if i >= 40 {
			continue
		}
		m2 := int32((i / 2) % 2)
		ft.Stages.set(i, 2, NodeID(20+i%2), m2)
		ft.Stages.set(i, 3, 30, m2)
	}
	roles := map[NodeID]Role{10: "leaf", 20: "spine", 21: "spine", 30: "super-spine"}
	sp := ft.StagePolarizations(func(n NodeID) Role { return roles[n] })
	if len(sp) != 2 {
		t.Fatalf("%d pairs, want 2: %+v", len(sp), sp)
	}
	a, b := sp[0], sp[1]
	if a.From != 1 || a.To != 2 || a.Flows != 40 || !a.Judged || a.MI > 1e-12 || a.NMI > 1e-12 || !(a.AMI < 0 && a.AMI > -0.05) {
		t.Errorf("stages 1-2: %+v, want 40 flows, MI 0, NMI 0, AMI slightly below 0", a)
	}
	if b.From != 2 || b.Flows != 40 || math.Abs(b.MI-math.Ln2) > 1e-12 || math.Abs(b.NMI-1) > 1e-12 || math.Abs(b.AMI-1) > 1e-12 ||
		math.Abs(b.AMIBySwitch-1) > 1e-12 || b.Switches != 2 {
		t.Errorf("stages 2-3: %+v, want MI ln 2, NMI 1, AMI 1 pooled and within both switches", b)
	}
	if a.Name() != "stage 1 -> 2 (leaf -> spine)" || b.Name() != "stage 2 -> 3 (spine -> super-spine)" {
		t.Errorf("names %q, %q", a.Name(), b.Name())
	}
	// The bootstrap statistic at weights 1 is the point estimate.
	pairs, stat := ft.StagePolarizationStat()
	out := make([]float64, 2*len(pairs))
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	stat()(w, out)
	if len(pairs) != 2 || out[0] != a.AMI || out[2] != b.AMI || out[3] != b.AMIBySwitch {
		t.Errorf("stat at weights 1: pairs %v, %v; want %v, %v, %v", pairs, out, a.AMI, b.AMI, b.AMIBySwitch)
	}
	// Removing the flows of member 1 at stage 2 leaves one stage-2 member: entropy 0,
	// the pair is not defined in that replicate.
	for i := range 40 {
		if (i/2)%2 == 1 {
			w[i] = 0
		}
	}
	stat()(w, out)
	if !math.IsNaN(out[2]) {
		t.Errorf("stages 2-3 with one member left: AMI %v, want NaN", out[2])
	}
}
