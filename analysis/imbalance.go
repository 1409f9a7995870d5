package analysis

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// Balance is the spread of one equal-cost set's load over its members.
//
// Loads are per-member totals in one unit (bytes, or flows); the set has
// Members = len(loads) members, idle members included. With mean m = Total/Members:
//
//	MaxMean      = max(x) / m                      (1 is perfect, Members is worst)
//	CoV          = population std(x) / m           (sqrt(sum (x-m)^2 / n) / m; 0 is perfect)
//	Jain         = (sum x)^2 / (n * sum x^2)       (1 is perfect, 1/n is worst)
//	IdleFraction = (members with x == 0) / n
//	Chi2         = sum (x - m)^2 / m               (Pearson's statistic against uniform)
//	Chi2P        = P(χ²(n-1) >= Chi2)              (gonum distuv.ChiSquared survival)
//
// The chi-square test treats the loads as counts of independent events: it is a valid
// goodness-of-fit test on flow counts (a hash assigns flows, not bytes). On bytes it is
// reported for completeness but is almost always ~0 because one byte is not an
// independent draw; read the flow-count p-value to judge a hash. Like every Pearson
// test it is approximate when the expected count per member (flows / members) is below
// about 5.
//
// Degenerate sets: a set with one member is balanced by definition (MaxMean 1, CoV 0,
// Jain 1, Chi2 0, Chi2P 1; IdleFraction 1 when it carried nothing). A set whose loads are
// all zero carried no traffic (Empty is true): its ratios are undefined and reported as
// the balanced values (MaxMean 1, CoV 0, Jain 1, Chi2 0, Chi2P 1) with IdleFraction 1;
// tier summaries leave empty sets out.
type Balance struct {
	Members      int     `json:"members"`
	Total        float64 `json:"total"`
	Empty        bool    `json:"empty,omitempty"`
	MaxMean      float64 `json:"max_mean"`
	CoV          float64 `json:"cov"`
	Jain         float64 `json:"jain"`
	IdleFraction float64 `json:"idle_fraction"`
	Chi2         float64 `json:"chi2"`
	Chi2P        float64 `json:"chi2_p"`
}

// Imbalance computes the Balance of one equal-cost set from its per-member loads
// (bytes or flows, non-negative). It allocates nothing. An empty slice gives the zero
// Balance.
func Imbalance(loads []float64) Balance {
	n := len(loads)
	if n == 0 {
		return Balance{}
	}
	b := Balance{Members: n, MaxMean: 1, Jain: 1, Chi2P: 1}
	b.Total = floats.Sum(loads)
	idle := 0
	for _, x := range loads {
		if x == 0 {
			idle++
		}
	}
	b.IdleFraction = float64(idle) / float64(n)
	if b.Total <= 0 {
		b.Empty = true
		b.IdleFraction = 1
		return b
	}
	mean, std := stat.PopMeanStdDev(loads, nil)
	b.MaxMean = floats.Max(loads) / mean
	b.CoV = std / mean
	sumSq := floats.Dot(loads, loads)
	b.Jain = b.Total * b.Total / (float64(n) * sumSq)
	if n == 1 {
		return b
	}
	var chi2 float64
	for _, x := range loads {
		d := x - mean
		chi2 += d * d / mean
	}
	b.Chi2 = chi2
	b.Chi2P = chi2Survival(chi2, float64(n-1))
	return b
}

// ImbalanceWeighted is Imbalance against unequal expected shares (a WCMP set,
// docs/model.md#routing): member i should carry share[i] of the total (shares add up
// to 1). With e = Total * share[i] and r = x / e:
//
//	MaxMean = max(r)   CoV = population std(r) / mean(r)   Jain = Jain's index of r
//	Chi2    = sum (x - e)^2 / e   (Pearson's statistic against the weights), df n-1
//
// and IdleFraction as Imbalance. nil shares is Imbalance (equal shares give the same
// numbers).
func ImbalanceWeighted(loads, share []float64) Balance {
	if share == nil {
		return Imbalance(loads)
	}
	n := len(loads)
	b := Imbalance(loads)
	if b.Empty || n < 2 {
		return b
	}
	var chi2, sum, sumSq, maxR float64
	rs := make([]float64, n)
	for i, x := range loads {
		e := b.Total * share[i]
		r := x / e
		rs[i] = r
		sum += r
		sumSq += r * r
		maxR = max(maxR, r)
		d := x - e
		chi2 += d * d / e
	}
	mean, std := stat.PopMeanStdDev(rs, nil)
	b.MaxMean = maxR
	b.CoV = std / mean
	b.Jain = sum * sum / (float64(n) * sumSq)
	b.Chi2 = chi2
	b.Chi2P = chi2Survival(chi2, float64(n-1))
	return b
}

// chi2Survival is P(χ²(df) >= x) (NaN when x is not a number).
func chi2Survival(x, df float64) float64 {
	if df <= 0 {
		return 1
	}
	return distuv.ChiSquared{K: df}.Survival(x)
}

// MinFlowsPerMember is the balance guard: an equal-cost set is judged when it carried
// at least this many flows per member (the expected count below which Pearson's
// chi-square test is not trusted); tier summaries cover the judged sets only.
const MinFlowsPerMember = 5

// JudgedSet reports whether a set whose members carried flows (flow counts per
// member) has enough flows to judge its balance: MinFlowsPerMember per member.
func JudgedSet(flows []float64) bool {
	var n float64
	for _, f := range flows {
		n += f
	}
	return len(flows) > 0 && n >= MinFlowsPerMember*float64(len(flows))
}

// SetLoad is the load of one equal-cost set: one value per member, in member order,
// idle members included, once in bytes and once in flows.
type SetLoad struct {
	Node NodeID
	Tier records.Tier
	// Role and Level are the switch's role and level in a topology file's run
	// (Role, docs/analysis.md#roles); "" groups the set by Tier.
	Role    Role
	Level   int
	Set     int
	Uplinks bool // every member leads one tier up (the set of a switch's uplinks)
	Bytes   []float64
	Flows   []float64
	// Shares are a WCMP set's expected shares per member (weights over their sum,
	// run.json topology.weighted_sets); nil for an equal-weight set.
	Shares []float64
}

// SetImbalance is one equal-cost set's Balance on bytes and on flows. Judged says it
// carried enough flows to be judged (JudgedSet); Label names it for people
// ("rack-p0-r0 uplinks").
type SetImbalance struct {
	Node   string  `json:"node"`
	Tier   Role    `json:"tier"` // the switch's role (records tier without a topology file)
	Set    int     `json:"set"`
	Label  string  `json:"label"`
	Judged bool    `json:"judged"`
	Bytes  Balance `json:"bytes"`
	Flows  Balance `json:"flows"`
	// BytesLoad and FlowsLoad are the member loads the balances come from.
	BytesLoad []float64 `json:"bytes_load"`
	FlowsLoad []float64 `json:"flows_load"`
}

// Worst holds, for each metric, its worst value over a tier's non-empty sets and the
// set it came from ("node/set"): the largest MaxMean, CoV and IdleFraction, the
// smallest Jain and Chi2P.
type Worst struct {
	MaxMean      float64 `json:"max_mean"`
	MaxMeanSet   string  `json:"max_mean_set"`
	CoV          float64 `json:"cov"`
	CoVSet       string  `json:"cov_set"`
	Jain         float64 `json:"jain"`
	JainSet      string  `json:"jain_set"`
	IdleFraction float64 `json:"idle_fraction"`
	IdleSet      string  `json:"idle_fraction_set"`
	Chi2P        float64 `json:"chi2_p"`
	Chi2PSet     string  `json:"chi2_p_set"`
}

// TierStats summarises the Balances of one tier's sets in one unit.
//
// Only non-empty sets count (Sets). MaxMean, CoV, Jain and IdleFraction are means over
// the sets weighted by each set's Total (traffic-weighted: a set that carried twice the
// bytes counts twice). Chi2P is the pooled test: the sum of the sets' chi-square
// statistics against χ² with the sum of their degrees of freedom (independent sets
// add), i.e. "is this tier as a whole consistent with uniform spreading". Chi2 and DF
// are that pooled statistic and its degrees of freedom. Worst gives the extremes.
// With no non-empty set every field is zero.
type TierStats struct {
	Sets         int     `json:"sets"`
	Total        float64 `json:"total"`
	MaxMean      float64 `json:"max_mean"`
	CoV          float64 `json:"cov"`
	Jain         float64 `json:"jain"`
	IdleFraction float64 `json:"idle_fraction"`
	Chi2         float64 `json:"chi2"`
	DF           int     `json:"df"`
	Chi2P        float64 `json:"chi2_p"`
	Worst        Worst   `json:"worst"`
}

// SummarizeTier summarises balances (one per set; labels name them in Worst, labels
// may be nil) as TierStats.
func SummarizeTier(balances []Balance, labels []string) TierStats {
	var t TierStats
	first := true
	for i, b := range balances {
		if b.Empty || b.Members == 0 {
			continue
		}
		label := ""
		if labels != nil {
			label = labels[i]
		}
		t.Sets++
		t.Total += b.Total
		w := b.Total
		t.MaxMean += w * b.MaxMean
		t.CoV += w * b.CoV
		t.Jain += w * b.Jain
		t.IdleFraction += w * b.IdleFraction
		t.Chi2 += b.Chi2
		t.DF += b.Members - 1
		wt := &t.Worst
		if first || b.MaxMean > wt.MaxMean {
			wt.MaxMean, wt.MaxMeanSet = b.MaxMean, label
		}
		if first || b.CoV > wt.CoV {
			wt.CoV, wt.CoVSet = b.CoV, label
		}
		if first || b.Jain < wt.Jain {
			wt.Jain, wt.JainSet = b.Jain, label
		}
		if first || b.IdleFraction > wt.IdleFraction {
			wt.IdleFraction, wt.IdleSet = b.IdleFraction, label
		}
		if first || b.Chi2P < wt.Chi2P {
			wt.Chi2P, wt.Chi2PSet = b.Chi2P, label
		}
		first = false
	}
	if t.Sets == 0 {
		nan := math.NaN()
		return TierStats{MaxMean: nan, CoV: nan, Jain: nan, IdleFraction: nan, Chi2: nan, Chi2P: nan,
			Worst: Worst{MaxMean: nan, CoV: nan, Jain: nan, IdleFraction: nan, Chi2P: nan}}
	}
	t.MaxMean /= t.Total
	t.CoV /= t.Total
	t.Jain /= t.Total
	t.IdleFraction /= t.Total
	t.Chi2P = chi2Survival(t.Chi2, float64(t.DF))
	return t
}

// TierImbalance is one tier's imbalance (the stable summary.json object
// imbalance.tiers.<tier>): a tier is a Role, the topology file's role of the
// switches in a run through one, else the records tier. The flat fields are the headline numbers: MaxMean, CoV, Jain
// and IdleFraction from Bytes (what loads the links), Chi2P from Flows (the valid test
// of the hash, see Balance). Bytes and Flows hold both summaries in full.
//
// Only judged sets count (JudgedSet: at least MinFlowsPerMember flows per member);
// Sets counts them, Unjudged the others. A tier with no judged set (no traffic crossed
// it, or too few flows) is not judged: Judged is false, Reason says why and the
// measures are NaN (null in JSON), never 0. FlowCount counts the flows that crossed the
// tier's sets (all of them).
type TierImbalance struct {
	Tier         Role      `json:"tier"`
	Level        int       `json:"-"` // the role's level, for ordering
	Judged       bool      `json:"judged"`
	Reason       string    `json:"reason,omitempty"`
	Sets         int       `json:"sets"`
	Unjudged     int       `json:"unjudged_sets"`
	FlowCount    float64   `json:"flow_count"`
	MaxMean      float64   `json:"max_mean"`
	CoV          float64   `json:"cov"`
	Jain         float64   `json:"jain"`
	Chi2P        float64   `json:"chi2_p"`
	IdleFraction float64   `json:"idle_fraction"`
	Bytes        TierStats `json:"bytes"`
	Flows        TierStats `json:"flows"`
}

// MarshalJSON writes undefined (NaN) measures as null.
func (t TierImbalance) MarshalJSON() ([]byte, error) {
	type plain TierImbalance
	return marshalNullNaN(plain(t))
}

// MarshalJSON writes undefined (NaN) measures as null.
func (t TierStats) MarshalJSON() ([]byte, error) {
	type plain TierStats
	return marshalNullNaN(plain(t))
}

// MarshalJSON writes undefined (NaN) measures as null.
func (w Worst) MarshalJSON() ([]byte, error) {
	type plain Worst
	return marshalNullNaN(plain(w))
}

// ImbalanceResult is the imbalance of every set and its per-tier (per-role)
// summary.
type ImbalanceResult struct {
	Sets  []SetImbalance          `json:"sets"`
	Tiers map[Role]*TierImbalance `json:"tiers"`
}

// TierNames returns the tiers (roles) present in r, lowest level first (rack,
// fabric, spine; leaf, spine, super-spine), then by name.
func (r *ImbalanceResult) TierNames() []Role {
	names := make([]Role, 0, len(r.Tiers))
	for t := range r.Tiers {
		names = append(names, t)
	}
	sortRoles(names, func(t Role) int { return r.Tiers[t].Level })
	return names
}

// ImbalanceOf computes every set's Balance and the per-tier summaries over the judged
// sets, naming the switches by nodes.
func ImbalanceOf(sets []SetLoad, nodes Nodes) *ImbalanceResult {
	r := &ImbalanceResult{Tiers: map[Role]*TierImbalance{}}
	byTier := map[Role][]int{}
	level := map[Role]int{}
	for _, s := range sets {
		role := roleOf(s.Role, s.Tier)
		level[role] = levelOf(s.Role, s.Level, s.Tier)
		si := SetImbalance{Node: nodes.Name(s.Node), Tier: role, Set: s.Set, Label: setLabel(nodes.Name(s.Node), s),
			Judged: JudgedSet(s.Flows), Bytes: ImbalanceWeighted(s.Bytes, s.Shares), Flows: ImbalanceWeighted(s.Flows, s.Shares), BytesLoad: s.Bytes, FlowsLoad: s.Flows}
		byTier[role] = append(byTier[role], len(r.Sets))
		r.Sets = append(r.Sets, si)
	}
	for tier, idx := range byTier {
		var bb, fb []Balance
		var labels []string
		var flows, bytes float64
		unjudged := 0
		for _, i := range idx {
			si := &r.Sets[i]
			flows += si.Flows.Total
			bytes += si.Bytes.Total
			if !si.Judged {
				unjudged++
				continue
			}
			bb, fb = append(bb, si.Bytes), append(fb, si.Flows)
			labels = append(labels, si.Label)
		}
		ti := tierImbalance(tier, SummarizeTier(bb, labels), SummarizeTier(fb, labels))
		ti.FlowCount, ti.Unjudged, ti.Level = flows, unjudged, level[tier]
		switch {
		case ti.Judged:
		case bytes == 0:
			ti.Reason = fmt.Sprintf("no traffic crossed the %s tier's equal-cost sets", tier)
		default:
			ti.Reason = fmt.Sprintf("too few flows (%s) to judge balance at the %s tier: fewer than %d per member in every set",
				units.FormatNumber(flows), tier, MinFlowsPerMember)
		}
		r.Tiers[tier] = ti
	}
	return r
}

func tierImbalance(tier Role, bytes, flows TierStats) *TierImbalance {
	return &TierImbalance{
		Tier: tier, Judged: bytes.Sets > 0, Sets: bytes.Sets,
		MaxMean: bytes.MaxMean, CoV: bytes.CoV, Jain: bytes.Jain, IdleFraction: bytes.IdleFraction,
		Chi2P: flows.Chi2P, Bytes: bytes, Flows: flows,
	}
}

// setLabel names a set for people: "rack-p0-r0 uplinks" for a switch's set of
// uplinks (the only equal-cost sets of a Clos), else "node set N".
func setLabel(node string, s SetLoad) string {
	if s.Uplinks {
		return node + " uplinks"
	}
	return node + " set " + strconv.Itoa(s.Set)
}
