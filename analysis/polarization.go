package analysis

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/tracefabric/tracefabric/internal/units"
)

// MinPolarizationFlows is the fewest flows crossing both the rack and the fabric tier
// for polarization to be judged: with fewer, its measures are null (Judged false).
const MinPolarizationFlows = 30

// NMINormalization names how NMI is normalized: I(X;Y) / min(H(X), H(Y)).
const NMINormalization = "min"

// Polarization is the dependence between two tiers' member choices over the flows that
// crossed both (the rack's uplink set and then the fabric's uplink set):
// docs/analysis.md#polarization.
//
// With X the rack member index and Y the fabric member index of each such flow,
// entropies in nats of the empirical distributions, and N flows:
//
//	I(X;Y)  = H(X) + H(Y) - H(X,Y)
//	E[I]    = expected I(X;Y) of independent choices with the same marginals:
//	          the hypergeometric model of Vinh, Epps and Bailey (2010), ExpectedMI
//	AMI     = (I - E[I]) / (min(H(X), H(Y)) - E[I])
//	NMI     = I / min(H(X), H(Y))
//
// AMI, the adjusted (chance-corrected) mutual information, is the polarization
// measure: 0 in expectation when the choices are independent, 1 when one determines
// the other (an unsalted hash whose value mod 4 picks both members: hash
// polarization, where one spine of four carries all of a fabric switch's up traffic);
// it can be slightly negative. The plain NMI is biased upward on finite samples (about
// (|X|-1)(|Y|-1)/(2N) nats: 600 independent flows read 0.027 within a rack) and is
// kept beside it only with its normalization named (NMINormalization). The min
// normalization (the "min" variant of the paper, adjusted_mutual_info_score with
// average_method="min" in scikit-learn) scores 1 for any fully determined relation,
// also between sets of different sizes.
//
// Undefined is null: when min(H(X), H(Y)) is 0 (every flow took the same member at
// one of the tiers) there is nothing to share and both measures are NaN (null in
// JSON), with Reason saying why; so they are below MinPolarizationFlows flows
// (Judged false).
//
// AMIByRack and NMIByRack are the same measures within each source rack (the flows
// leaving one rack's uplink set), averaged over the racks where they are defined,
// weighted by their flows. Salted hashes whose salt cancels out (a CRC is affine:
// crc(salt||key) = crc(salt||0...) XOR crc(0...||key) XOR a constant) make the fabric
// choice the rack choice XOR a per-rack constant: pooled over racks the choices look
// independent while every rack is fully polarized (by rack 1). Racks counts the racks
// with a defined measure.
//
// AMIEstimate and AMIByRackEstimate hold the AMIs with their bootstrap intervals
// (Bootstrap) when Analyze computed them.
type Polarization struct {
	Flows             float64  `json:"flows"`
	Judged            bool     `json:"judged"`
	Reason            string   `json:"reason,omitempty"`
	AMI               float64  `json:"ami"`
	AMIByRack         float64  `json:"ami_by_rack"`
	AMIEstimate       Estimate `json:"ami_interval"`
	AMIByRackEstimate Estimate `json:"ami_by_rack_interval"`
	NMI               float64  `json:"nmi"`
	NMIByRack         float64  `json:"nmi_by_rack"`
	NMINormalization  string   `json:"nmi_normalization"`
	MI                float64  `json:"mi"`
	ExpectedMI        float64  `json:"expected_mi"`
	HX                float64  `json:"h_rack"`
	HY                float64  `json:"h_fabric"`
	Racks             int      `json:"racks"`
}

// MarshalJSON writes undefined (NaN) measures as null.
func (p Polarization) MarshalJSON() ([]byte, error) {
	type plain Polarization
	return marshalNullNaN(plain(p))
}

// pairNames name the two choices of a polarization measure in its reasons: the rack
// and fabric tiers, or two consecutive ECMP stages.
type pairNames struct {
	x, y     string // "rack", "fabric"; "stage-2", "stage-3"
	none     string // no flow made both choices
	crossing string // what the flows counted did
}

// rackFabric names the rack and fabric member choices of Polarization.
var rackFabric = pairNames{x: "rack", y: "fabric", none: "no flow crossed both the rack and the fabric tier",
	crossing: "crossing both the rack and the fabric tier"}

// stagePair names the choices at stages k and k+1 (StagePolarization).
func stagePair(k int) pairNames {
	return pairNames{x: fmt.Sprintf("stage-%d", k), y: fmt.Sprintf("stage-%d", k+1),
		none:     fmt.Sprintf("no flow made ECMP choices at both stage %d and stage %d", k, k+1),
		crossing: fmt.Sprintf("making ECMP choices at both stage %d and stage %d", k, k+1)}
}

// contingency is the scratch space of polarization measures on nx x ny tables.
type contingency struct {
	names    pairNames
	logs     logTable
	nx, ny   int
	px, py   []float64 // marginal counts
	pxy      []float64 // probabilities
	pooled   []float64 // the pooled table
	nxp, nyp []float64
}

func newContingency(nx, ny int) *contingency {
	return newNamedContingency(nx, ny, rackFabric)
}

func newNamedContingency(nx, ny int, names pairNames) *contingency {
	return &contingency{names: names, nx: nx, ny: ny, px: make([]float64, nx), py: make([]float64, ny), pxy: make([]float64, nx*ny),
		pooled: make([]float64, nx*ny), nxp: make([]float64, nx), nyp: make([]float64, ny)}
}

// measure computes the polarization of one table: counts[x*ny+y] flows (integers;
// bootstrap weights included) took member x at the first tier and y at the second.
func (c *contingency) measure(counts []float64) Polarization {
	nx, ny := c.nx, c.ny
	if len(counts) != nx*ny {
		panic("analysis: contingency table size mismatch")
	}
	clear(c.px)
	clear(c.py)
	var n float64
	for x := 0; x < nx; x++ {
		for y := 0; y < ny; y++ {
			v := counts[x*ny+y]
			c.px[x] += v
			c.py[y] += v
			n += v
		}
	}
	p := Polarization{Flows: n, NMINormalization: NMINormalization, AMI: math.NaN(), NMI: math.NaN(), AMIByRack: math.NaN(), NMIByRack: math.NaN()}
	if n <= 0 {
		p.Reason = c.names.none
		return p
	}
	for i, v := range counts {
		c.pxy[i] = v / n
	}
	for x, v := range c.px {
		c.nxp[x] = v / n
	}
	for y, v := range c.py {
		c.nyp[y] = v / n
	}
	p.HX, p.HY = stat.Entropy(c.nxp), stat.Entropy(c.nyp)
	p.MI = max(p.HX+p.HY-stat.Entropy(c.pxy), 0) // max: rounding
	h := min(p.HX, p.HY)
	if h <= 1e-12 {
		side := c.names.x
		if p.HY < p.HX {
			side = c.names.y
		}
		p.Reason = fmt.Sprintf("every flow took the same %s member: an entropy of 0 leaves nothing to compare", side)
		return p
	}
	p.MI = min(p.MI, h)
	p.NMI = p.MI / h
	p.ExpectedMI = c.logs.expectedMI(c.px, c.py, n)
	if d := h - p.ExpectedMI; d > 1e-12 {
		p.AMI = (p.MI - p.ExpectedMI) / d
	} else {
		p.Reason = "the chance agreement of these marginals equals their entropy: adjusted mutual information undefined"
	}
	return p
}

// ExpectedMI is the expected mutual information, in nats, of two labelings of n items
// with row marginals a and column marginals b (counts) when the labelings are
// independent: under the hypergeometric model of random contingency tables with fixed
// marginals (Vinh, Epps and Bailey, "Information Theoretic Measures for Clusterings
// Comparison", JMLR 11, 2010, eq. 24a),
//
//	E[I] = sum_i sum_j sum_{k=max(1, a_i+b_j-n)}^{min(a_i,b_j)} (k/n) log(n k / (a_i b_j)) P(k)
//	P(k) = C(a_i, k) C(n-a_i, b_j-k) / C(n, b_j)
//
// Counts must be whole numbers. Each cell's sum starts at the mode of P and walks out
// by the ratio P(k+1)/P(k) = (a-k)(b-k) / ((k+1)(n-a-b+k+1)) until P is below 1e-17 of
// its peak, so a cell costs about the width of the distribution, not min(a, b) terms.
func ExpectedMI(a, b []float64, n float64) float64 {
	var logs logTable
	return logs.expectedMI(a, b, n)
}

// logTable caches log k for whole numbers k, grown on demand: ExpectedMI's terms
// need log(n k / (a b)) for every k of a cell's walk, and a bootstrap evaluates it for
// every replicate.
type logTable []float64

func (t *logTable) log(k float64) float64 {
	i := int(k)
	for i >= len(*t) {
		*t = append(*t, math.Log(float64(len(*t))))
	}
	return (*t)[i]
}

func (t *logTable) expectedMI(a, b []float64, n float64) float64 {
	if n <= 0 {
		return 0
	}
	var e float64
	for _, ai := range a {
		if ai <= 0 {
			continue
		}
		for _, bj := range b {
			if bj <= 0 {
				continue
			}
			e += t.expectedCell(ai, bj, n)
		}
	}
	return e
}

// expectedCell is one cell's term of ExpectedMI.
func (t *logTable) expectedCell(a, b, n float64) float64 {
	lo, hi := max(1, a+b-n), min(a, b)
	if lo > hi {
		return 0
	}
	mode := math.Floor((a + 1) * (b + 1) / (n + 2))
	mode = min(max(mode, lo), hi)
	lp := lchoose(a, mode) + lchoose(n-a, b-mode) - lchoose(n, b)
	pm := math.Exp(lp)
	c := math.Log(n / (a * b)) // log(n k / (a b)) = log k + c
	term := func(k, p float64) float64 { return k / n * (t.log(k) + c) * p }
	sum := term(mode, pm)
	for k, p := mode, pm; k < hi; k++ { // up
		p *= (a - k) * (b - k) / ((k + 1) * (n - a - b + k + 1))
		if p < pm*1e-17 {
			break
		}
		sum += term(k+1, p)
	}
	for k, p := mode, pm; k > lo; k-- { // down: P(k-1) = P(k) k (n-a-b+k) / ((a-k+1)(b-k+1))
		p *= k * (n - a - b + k) / ((a - k + 1) * (b - k + 1))
		if p < pm*1e-17 {
			break
		}
		sum += term(k-1, p)
	}
	return sum
}

// lchoose is log C(n, k).
func lchoose(n, k float64) float64 {
	a, _ := math.Lgamma(n + 1)
	b, _ := math.Lgamma(k + 1)
	c, _ := math.Lgamma(n - k + 1)
	return a - b - c
}

// NMIFromCounts computes the Polarization of one contingency table: counts[x*ny+y]
// is the number of flows that took member x at the first tier and member y at the
// second (whole numbers). It does not apply MinPolarizationFlows.
func NMIFromCounts(counts []float64, nx, ny int) Polarization {
	return newContingency(nx, ny).measure(counts)
}

// NMI computes the Polarization of paired member choices x[i], y[i] of the same
// flows. Pairs with a negative index (a tier the flow did not cross) are skipped, as
// are the elements of the longer slice beyond the shorter's length.
func NMI(x, y []int) Polarization {
	n := min(len(x), len(y))
	nx, ny := 0, 0
	for i := range n {
		if x[i] >= 0 && y[i] >= 0 {
			nx = max(nx, x[i]+1)
			ny = max(ny, y[i]+1)
		}
	}
	counts := make([]float64, nx*ny)
	for i := range n {
		if x[i] >= 0 && y[i] >= 0 {
			counts[x[i]*ny+y[i]]++
		}
	}
	return NMIFromCounts(counts, nx, ny)
}

// polLayout places flows in per-switch contingency tables: flow i that made both
// choices counts in cell[i] = g*nx*ny + x*ny + y, x and y being its members at the
// first and the second choice and g the ordinal of the switch of its first choice
// (its source rack for Polarization); -1 for the others. groupNodes lists the
// switches by ordinal.
type polLayout struct {
	names          pairNames
	groups, nx, ny int
	cell           []int32
	groupNodes     []NodeID
}

// newPolLayout lays out n flows whose choices pair(i) gives: the two members (-1
// when the flow did not make that choice) and the switch of the first.
func newPolLayout(n int, names pairNames, pair func(i int) (x, y int32, g NodeID)) polLayout {
	l := polLayout{names: names}
	group := map[NodeID]int32{}
	for i := range n {
		if x, y, g := pair(i); x >= 0 && y >= 0 {
			l.nx = max(l.nx, int(x)+1)
			l.ny = max(l.ny, int(y)+1)
			if _, ok := group[g]; !ok {
				group[g] = int32(len(group))
				l.groupNodes = append(l.groupNodes, g)
			}
		}
	}
	l.groups = len(group)
	l.cell = make([]int32, n)
	for i := range n {
		l.cell[i] = -1
		if x, y, g := pair(i); x >= 0 && y >= 0 {
			l.cell[i] = group[g]*int32(l.nx*l.ny) + x*int32(l.ny) + y
		}
	}
	return l
}

// flows counts the flows that made both choices.
func (l *polLayout) flows() int {
	n := 0
	for _, c := range l.cell {
		if c >= 0 {
			n++
		}
	}
	return n
}

// contingency returns the scratch space of the layout's tables.
func (l *polLayout) contingency() *contingency { return newNamedContingency(l.nx, l.ny, l.names) }

// polLayout lays out the flows' rack and fabric member choices, per source rack.
func (ft *FlowTable) polLayout() polLayout {
	return newPolLayout(len(ft.Flows), rackFabric, func(i int) (int32, int32, NodeID) {
		f := &ft.Flows[i]
		return f.RackMember, f.FabricMember, f.Rack
	})
}

// polarizationFrom computes the pooled and per-rack measures from per-rack tables
// (layout of polLayout); below minFlows pooled flows the measures are not judged
// (MinPolarizationFlows for a run; 0 in a bootstrap replicate, whose run was judged).
func (c *contingency) polarizationFrom(counts []float64, groups int, minFlows float64) Polarization {
	if groups == 0 || c.nx == 0 || c.ny == 0 {
		return Polarization{AMI: math.NaN(), NMI: math.NaN(), AMIByRack: math.NaN(), NMIByRack: math.NaN(),
			NMINormalization: NMINormalization, Reason: c.names.none}
	}
	k := c.nx * c.ny
	pooled := c.pooled
	clear(pooled)
	var amiSum, nmiSum, n float64
	racks := 0
	for g := range groups {
		t := counts[g*k : (g+1)*k]
		for i, v := range t {
			pooled[i] += v
		}
		p := c.measure(t)
		if !math.IsNaN(p.AMI) {
			amiSum += p.Flows * p.AMI
			nmiSum += p.Flows * p.NMI
			n += p.Flows
			racks++
		}
	}
	p := c.measure(pooled)
	p.Racks = racks
	p.AMIByRack, p.NMIByRack = math.NaN(), math.NaN()
	if n > 0 {
		p.AMIByRack, p.NMIByRack = amiSum/n, nmiSum/n
	}
	if p.Flows < minFlows {
		p.Reason = fmt.Sprintf("too few flows (%s) %s to judge polarization: fewer than %d", units.FormatNumber(p.Flows), c.names.crossing, MinPolarizationFlows)
	}
	p.Judged = p.Reason == ""
	if !p.Judged {
		p.AMI, p.AMIByRack, p.NMI, p.NMIByRack = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	return p
}

// Polarization returns the polarization of the flows' rack and fabric member choices
// (flows that crossed both tiers), pooled and per source rack, without intervals.
func (ft *FlowTable) Polarization() Polarization {
	l := ft.polLayout()
	return l.polarization()
}

// polarization is the layout's Polarization without intervals.
func (l *polLayout) polarization() Polarization {
	counts := make([]float64, l.groups*l.nx*l.ny)
	for _, c := range l.cell {
		if c >= 0 {
			counts[c]++
		}
	}
	p := l.contingency().polarizationFrom(counts, l.groups, MinPolarizationFlows)
	p.AMIEstimate, p.AMIByRackEstimate = Estimate{Value: p.AMI}, Estimate{Value: p.AMIByRack}
	return p
}
