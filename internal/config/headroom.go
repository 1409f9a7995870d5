package config

import (
	"fmt"
	"math/big"

	"github.com/tracefabric/tracefabric/internal/units"
)

// QuantumBytes is one PFC pause quantum: 512 bit times, i.e. 64 bytes at any speed.
const QuantumBytes units.Bytes = 64

// responseQuanta is IEEE 802.3 Annex 31B's PFC response budget, by port speed.
var responseQuanta = []struct {
	speed  units.BitRate
	quanta int
}{
	{10 * units.Gbps, 67},
	{25 * units.Gbps, 80},
	{40 * units.Gbps, 118},
	{50 * units.Gbps, 147},
	{100 * units.Gbps, 394},
	{200 * units.Gbps, 453},
	{400 * units.Gbps, 905},
}

// ResponseQuanta returns the peer's PFC response budget in quanta for a port of the
// given speed (IEEE 802.3 Annex 31B): 67, 80, 118, 147, 394, 453, 905 at 10, 25, 40,
// 50, 100, 200, 400 Gb/s. A speed between two listed speeds takes the next listed
// speed up (budgets grow with speed, so this never under-sizes); below 10 Gb/s it is
// 67; above 400 Gb/s it scales linearly, ceil(905 * speed / 400 Gb/s).
func ResponseQuanta(speed units.BitRate) int {
	for _, r := range responseQuanta {
		if speed <= r.speed {
			return r.quanta
		}
	}
	top := responseQuanta[len(responseQuanta)-1]
	q := new(big.Int).Mul(big.NewInt(int64(top.quanta)), big.NewInt(int64(speed)))
	return int(ceilDiv(q, big.NewInt(int64(top.speed))).Int64())
}

// CellFactor returns the worst ratio of buffer bytes to wire bytes over Ethernet frames
// of 64 to mtu+18 bytes, as the exact fraction num/den: a frame of F bytes occupies
// ceil(F/cell) cells (cells*cell buffer bytes) and F+20 wire bytes. For 256-byte cells
// it is 256/84 (64-byte frames).
func CellFactor(mtu, cell units.Bytes) (num, den int64) {
	num, den = 0, 1
	cell = max(cell, 1)
	maxF := int64(mtu) + 18
	if maxF < 64 {
		maxF = 64
	}
	c := int64(cell)
	for f := int64(64); f <= maxF; f++ {
		// Within a run of frames using the same number of cells the ratio is largest
		// at the smallest frame; skip to the first frame of the next cell count.
		n := (f + c - 1) / c * c
		w := f + 20
		if n*den > num*w {
			num, den = n, w
		}
		f = n // n >= f; the loop continues at n+1
	}
	return num, den
}

// PeakArrival returns W of docs/model.md#headroom-sizing: the wire bytes that land in
// headroom once a port decides to pause, 3*Fw + Pw + 2*ceil(C*d/8) + R, with Fw =
// mtu+38 the largest wire frame, Pw = 84 the PFC frame, C the port speed, d the link's
// one-way propagation delay and R = ResponseQuanta(C)*64 the peer's response budget.
// The three frames are the one whose arrival crossed Xoff (it goes to headroom), the
// one the port is sending when the pause frame waits to start, and the one the peer
// is sending when the pause arrives.
func PeakArrival(speed units.BitRate, delay units.Time, mtu units.Bytes) units.Bytes {
	fw := mtu + 38
	// ceil(C*d/8) with C in bit/s and d in ps: ceil(C*d / 8e12).
	cd := new(big.Int).Mul(big.NewInt(int64(speed)), big.NewInt(int64(delay)))
	flight := ceilDiv(cd, big.NewInt(8*int64(units.Second))).Int64()
	r := units.Bytes(ResponseQuanta(speed)) * QuantumBytes
	return 3*fw + PfcFrameWireBytes + 2*units.Bytes(flight) + r
}

// AutoHeadroom returns the headroom of docs/model.md#headroom-sizing for one (port, lossless pool):
// W * CellFactor rounded up to whole cells, W = PeakArrival(speed, delay, mtu).
// Worked example: 100 Gb/s, 1 us, MTU 9000, 256-byte cells: W = 27,114 + 84 + 25,000
// + 25,216 = 77,414 B, x 256/84 = 235,929.9 -> 236,032 B (922 cells).
// A non-positive cell is taken as 1 byte (Validate rejects it).
func AutoHeadroom(speed units.BitRate, delay units.Time, mtu, cell units.Bytes) units.Bytes {
	return autoHeadroom(speed, delay, 0, mtu, cell)
}

// autoHeadroom is AutoHeadroom with a ForwardingLatency fwd: frames are admitted (and
// the pause decided) fwd after they arrive, so the ceil(C*fwd/8) bytes that arrive in
// that time also land in headroom; W grows by them. With fwd = 0 it is the formula of
// docs/model.md#headroom-sizing exactly.
func autoHeadroom(speed units.BitRate, delay, fwd units.Time, mtu, cell units.Bytes) units.Bytes {
	cell = max(cell, 1)
	w := PeakArrival(speed, delay, mtu)
	if fwd > 0 {
		cf := new(big.Int).Mul(big.NewInt(int64(speed)), big.NewInt(int64(fwd)))
		w += units.Bytes(ceilDiv(cf, big.NewInt(8*int64(units.Second))).Int64())
	}
	num, den := CellFactor(mtu, cell)
	// cells = ceil(W*num / (den*cell))
	x := new(big.Int).Mul(big.NewInt(int64(w)), big.NewInt(num))
	cells := ceilDiv(x, new(big.Int).Mul(big.NewInt(den), big.NewInt(int64(cell))))
	return units.Bytes(cells.Int64()) * cell
}

// HeadroomFor returns the headroom of one (port, lossless pool) on a port of the given
// speed whose link has the given one-way propagation delay: AutoHeadroom under
// "auto" (plus what arrives during the switch's ForwardingLatency, which delays the
// pause decision; nothing with the default 0), else the fixed size. A fixed size below AutoHeadroom comes with a warning
// (docs/model.md#headroom-sizing: lossless traffic may then drop with reason headroom).
func (s *Switch) HeadroomFor(speed units.BitRate, delay units.Time) (units.Bytes, string) {
	need := autoHeadroom(speed, delay, s.ForwardingLatency, s.Mtu, s.CellSize)
	if s.Headroom.Auto {
		return need, ""
	}
	if s.Headroom.Size < need {
		return s.Headroom.Size, fmt.Sprintf("Switch.Headroom %v (%d B) is below the %d B that a %v port with %v links needs (docs/model.md#headroom-sizing): lossless traffic may drop with reason headroom",
			s.Headroom.Size, int64(s.Headroom.Size), int64(need), speed, delay)
	}
	return s.Headroom.Size, ""
}

func ceilDiv(a, b *big.Int) *big.Int {
	q, m := new(big.Int).QuoRem(a, b, new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}
