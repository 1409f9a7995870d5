package analysis

import (
	"gonum.org/v1/gonum/stat"
)

// Polarization is the dependence between two tiers' member choices over the flows that
// crossed both (the rack's uplink set and then the fabric's uplink set).
//
// With X the rack member index and Y the fabric member index of each such flow, and
// entropies in nats from the empirical joint distribution:
//
//	I(X;Y) = H(X) + H(Y) - H(X,Y)
//	NMI    = I(X;Y) / min(H(X), H(Y))
//
// NMI is 0 when the choices are independent and 1 when one determines the other (for
// example an unsalted hash whose value mod 4 picks both members: "hash polarization",
// where one spine of four carries all of a fabric switch's up traffic). The min
// normalization is chosen so that any fully determined relation, also between sets of
// different sizes, scores 1. When min(H(X), H(Y)) is 0 (every flow took the same member
// at one of the tiers) nothing can be shared and NMI is 0. The plug-in estimate is
// biased upward by about (|X|-1)(|Y|-1)/(2N) nats for N flows, negligible for the
// thousands of flows of a trace.
type Polarization struct {
	Flows float64 `json:"flows"`
	MI    float64 `json:"mi"`
	HX    float64 `json:"h_rack"`
	HY    float64 `json:"h_fabric"`
	NMI   float64 `json:"nmi"`
}

// NMIFromCounts computes the Polarization from a contingency table: counts[x*ny+y] is
// the number (or weight) of flows that took member x at the first tier and member y at
// the second. scratch, if it has room for nx+ny+nx*ny values, avoids allocation.
func NMIFromCounts(counts []float64, nx, ny int, scratch []float64) Polarization {
	if len(counts) != nx*ny {
		panic("analysis: contingency table size mismatch")
	}
	need := nx + ny + nx*ny
	if cap(scratch) < need {
		scratch = make([]float64, need)
	}
	scratch = scratch[:need]
	px, py, pxy := scratch[:nx], scratch[nx:nx+ny], scratch[nx+ny:]
	clear(px)
	clear(py)
	var n float64
	for _, c := range counts {
		n += c
	}
	p := Polarization{Flows: n}
	if n <= 0 {
		return p
	}
	for x := 0; x < nx; x++ {
		for y := 0; y < ny; y++ {
			v := counts[x*ny+y] / n
			pxy[x*ny+y] = v
			px[x] += v
			py[y] += v
		}
	}
	p.HX = stat.Entropy(px)
	p.HY = stat.Entropy(py)
	p.MI = p.HX + p.HY - stat.Entropy(pxy)
	if p.MI < 0 { // rounding
		p.MI = 0
	}
	h := min(p.HX, p.HY)
	if h <= 1e-12 {
		p.NMI = 0
		return p
	}
	p.NMI = min(p.MI/h, 1)
	return p
}

// NMI computes the Polarization of paired member choices x[i], y[i] (non-negative
// member indices) of the same flows.
func NMI(x, y []int) Polarization {
	if len(x) != len(y) {
		panic("analysis: NMI needs paired choices")
	}
	nx, ny := 0, 0
	for i := range x {
		nx = max(nx, x[i]+1)
		ny = max(ny, y[i]+1)
	}
	counts := make([]float64, nx*ny)
	for i := range x {
		counts[x[i]*ny+y[i]]++
	}
	return NMIFromCounts(counts, nx, ny, nil)
}
