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
//
// NMIByRack is the same measure within each source rack (the flows leaving one rack's
// uplink set), averaged over the racks weighted by their flows. Salted hashes whose
// salt cancels out (CRC is affine: crc(salt||key) = crc(salt||0...) XOR crc(0...||key)
// XOR a constant) make the fabric choice the rack choice XOR a per-rack constant: the
// pooled NMI then reads 0.5 while every rack is fully polarized (NMIByRack 1). With
// few flows per rack the plug-in bias above grows (16 cells and 40 flows: about 0.1
// nats), so read NMIByRack on traces with at least hundreds of flows per rack. Racks
// counts the racks with flows that crossed both tiers.
type Polarization struct {
	Flows     float64 `json:"flows"`
	MI        float64 `json:"mi"`
	HX        float64 `json:"h_rack"`
	HY        float64 `json:"h_fabric"`
	NMI       float64 `json:"nmi"`
	NMIByRack float64 `json:"nmi_by_rack"`
	Racks     int     `json:"racks"`
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
	return NMIFromCounts(counts, nx, ny, nil)
}

// polLayout places flows in per-source-rack contingency tables: flow i that crossed
// both tiers counts in cell[i] = g*nx*ny + rackMember*ny + fabricMember, g being its
// rack set's ordinal; -1 for the others.
type polLayout struct {
	groups, nx, ny int
	cell           []int32
}

func (ft *FlowTable) polLayout() polLayout {
	var l polLayout
	setOfCell := make([]int32, ft.cells())
	for i, s := range ft.Sets {
		for c := s.Offset; c < s.Offset+s.Members; c++ {
			setOfCell[c] = int32(i)
		}
	}
	group := map[int32]int32{}
	for _, f := range ft.Flows {
		if f.RackMember >= 0 && f.FabricMember >= 0 && f.RackCell >= 0 {
			l.nx = max(l.nx, int(f.RackMember)+1)
			l.ny = max(l.ny, int(f.FabricMember)+1)
			set := setOfCell[f.RackCell]
			if _, ok := group[set]; !ok {
				group[set] = int32(len(group))
			}
		}
	}
	l.groups = len(group)
	l.cell = make([]int32, len(ft.Flows))
	for i, f := range ft.Flows {
		l.cell[i] = -1
		if f.RackMember >= 0 && f.FabricMember >= 0 && f.RackCell >= 0 {
			g := group[setOfCell[f.RackCell]]
			l.cell[i] = g*int32(l.nx*l.ny) + f.RackMember*int32(l.ny) + f.FabricMember
		}
	}
	return l
}

// polarizationFrom computes the pooled and per-rack NMI from per-rack tables (layout of
// polLayout). pooled must have room for nx*ny values; scratch for nx+ny+nx*ny.
func polarizationFrom(counts []float64, groups, nx, ny int, pooled, scratch []float64) Polarization {
	if groups == 0 || nx == 0 || ny == 0 {
		return Polarization{}
	}
	k := nx * ny
	pooled = pooled[:k]
	clear(pooled)
	var sum, n float64
	racks := 0
	for g := range groups {
		t := counts[g*k : (g+1)*k]
		for c, v := range t {
			pooled[c] += v
		}
		p := NMIFromCounts(t, nx, ny, scratch)
		if p.Flows > 0 {
			sum += p.Flows * p.NMI
			n += p.Flows
			racks++
		}
	}
	p := NMIFromCounts(pooled, nx, ny, scratch)
	p.Racks = racks
	if n > 0 {
		p.NMIByRack = sum / n
	}
	return p
}
