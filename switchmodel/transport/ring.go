package transport

import "github.com/tracefabric/tracefabric/internal/units"

// seg is one segment a sender holds: offered by the application and not yet
// acknowledged.
type seg struct {
	start  int64      // sequence units before the segment
	sentAt units.Time // its last transmission
	trace  int64      // its index in the trace
	length int32      // IPv4 total length
	units  int32      // sequence units it occupies
	dscp   uint8
	ecn    uint8 // the codepoint it is sent with
	sends  uint8 // transmissions so far (saturating)
}

// ring holds a sender's segments [base, base+n) in a circular buffer that grows by
// doubling: no allocation per segment once it is large enough for the flow's backlog.
type ring struct {
	buf  []seg
	head int
	n    int
	base int32 // index of buf[head] in the flow
}

func (r *ring) push(s seg) {
	if r.n == len(r.buf) {
		nb := make([]seg, max(16, 2*len(r.buf)))
		for i := 0; i < r.n; i++ {
			nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = s
	r.n++
}

// at returns segment i (base <= i < base+n).
func (r *ring) at(i int32) *seg {
	return &r.buf[(r.head+int(i-r.base))&(len(r.buf)-1)]
}

// end is the index after the last segment.
func (r *ring) end() int32 { return r.base + int32(r.n) }

// popTo drops the segments before i.
func (r *ring) popTo(i int32) {
	k := int(i - r.base)
	if k <= 0 {
		return
	}
	k = min(k, r.n)
	r.head = (r.head + k) & (len(r.buf) - 1)
	r.n -= k
	r.base += int32(k)
	if r.n == 0 && len(r.buf) > 1024 {
		r.buf, r.head = nil, 0 // a flow that went idle gives a large buffer back
	}
}

// startOf returns the sequence units before segment i (base <= i <= end; at end, the
// units of everything held follow the last segment).
func (r *ring) startOf(i int32, endUnits int64) int64 {
	if i >= r.end() {
		return endUnits
	}
	return r.at(i).start
}
