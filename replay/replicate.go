package replay

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/records"
)

// Replication (--replicate, docs/model.md#load-from-a-small-capture): N copies of the
// capture's traffic, so that a capture taken at one vantage point loads a fabric.
// Copy 0 is the capture itself. Copy k (1 <= k < N):
//   - its hosts are the original's rotated by shift(k) = floor(k x Racks / N) racks:
//     host i of rack r becomes host i mod len(rack) of rack (r + shift(k)) mod Racks;
//   - its addresses are the original's with the leading 8 bits (IPv4) or 16 bits
//     (IPv6) increased by k x Step (mod 2^8, 2^16), the rest kept: the family stays,
//     and Step is the smallest that makes every copy's address distinct from every
//     endpoint's and every other copy's (preferring steps that give no multicast
//     address), so ECMP hashes each copy's flows as flows of their own;
//   - its packets enter Offset(k) later: a uniform draw in [0, --replicate-jitter) of
//     capture time, ns, from PCG(Seed, crc32IEEE("replicate")), one per copy in order
//     (0 without jitter).
// With one count per trace (--replicate 3,1), copy k holds the traces whose count is
// above k: each capture at its own share of the load.

// MaxReplicate bounds --replicate.
const MaxReplicate = 1024

// replication is a Prepared's copies (nil: the capture once).
type replication struct {
	copies  int     // N
	perFile []int   // copies of each trace file (all N when the flag gave one count)
	step    uint32  // the address step
	offset  []int64 // per copy, ns of capture time
	shift   []int   // per copy, racks
	hostOf  [][]int32
}

// newReplication prepares copies of pr's trace: counts has one count for every trace
// or one per trace (nil or [1]: no copies).
func newReplication(pr *Prepared, counts []int, jitter time.Duration) (*replication, error) {
	n := 1
	for _, c := range counts {
		if c < 1 || c > MaxReplicate {
			return nil, inputErrf("--replicate %d: want 1..%d copies", c, MaxReplicate)
		}
		n = max(n, c)
	}
	if len(counts) > 1 && len(counts) != len(pr.Opt.Traces) {
		return nil, inputErrf("--replicate %v: one count for every trace, or one per trace (%d traces)", counts, len(pr.Opt.Traces))
	}
	if jitter < 0 {
		return nil, inputErrf("--replicate-jitter %v must be >= 0", jitter)
	}
	if n == 1 {
		return nil, nil
	}
	r := &replication{copies: n, perFile: make([]int, len(pr.Opt.Traces))}
	for i := range r.perFile {
		r.perFile[i] = n
		if len(counts) > 1 {
			r.perFile[i] = counts[i]
		}
	}
	step, err := addressStep(pr.Summary.EndpointAddrs, n)
	if err != nil {
		return nil, err
	}
	r.step = step
	rng := rand.New(rand.NewPCG(uint64(pr.Opt.Config.Seed), uint64(crc32.ChecksumIEEE([]byte("replicate")))))
	racks := pr.HostMap.Racks
	hosts := len(pr.HostMap.rackOf)
	r.offset, r.shift, r.hostOf = make([]int64, n), make([]int, n), make([][]int32, n)
	for k := range n {
		if k > 0 && jitter > 0 {
			r.offset[k] = int64(rng.Uint64N(uint64(jitter)))
		}
		r.shift[k] = k * len(racks) / n
		r.hostOf[k] = make([]int32, hosts)
		for ri, rack := range racks {
			to := racks[(ri+r.shift[k])%len(racks)]
			for i, h := range rack.Hosts {
				r.hostOf[k][h] = to.Hosts[i%len(to.Hosts)]
			}
		}
	}
	return r, nil
}

// ParseReplicate reads a --replicate value: N, or N1,N2,... (one count per trace).
func ParseReplicate(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > MaxReplicate {
			return nil, fmt.Errorf("%q: want a number of copies 1..%d, or one per trace separated by commas (3,1)", s, MaxReplicate)
		}
		out = append(out, n)
	}
	return out, nil
}

// count is the number of copies (1 without --replicate).
func (r *replication) count() int {
	if r == nil {
		return 1
	}
	return r.copies
}

// maxOffset is the latest copy's time offset, ns.
func (r *replication) maxOffset() int64 {
	if r == nil {
		return 0
	}
	var m int64
	for _, o := range r.offset {
		m = max(m, o)
	}
	return m
}

// addr is copy k's address of a.
func (r *replication) addr(a ipaddr.Addr, k int) ipaddr.Addr {
	if k == 0 {
		return a
	}
	return shiftAddr(a, uint32(k)*r.step)
}

// original is the address whose copy k is a.
func (r *replication) original(a ipaddr.Addr, k int) ipaddr.Addr {
	if k == 0 {
		return a
	}
	return shiftAddr(a, -uint32(k)*r.step)
}

// shiftAddr adds d to a's leading 8 bits (IPv4) or 16 bits (IPv6), modulo their range.
func shiftAddr(a ipaddr.Addr, d uint32) ipaddr.Addr {
	if a.Is4() {
		return ipaddr.FromUint32(a.Uint32() + d<<24)
	}
	b := a.As16()
	v := (uint32(b[0])<<8 | uint32(b[1])) + d
	b[0], b[1] = byte(v>>8), byte(v)
	return ipaddr.From16(b)
}

// addressStep finds the smallest step that gives n copies of the endpoints distinct
// addresses (docs/model.md#load-from-a-small-capture): steps whose copies hold no
// multicast address first, then any.
func addressStep(eps []ipaddr.Addr, n int) (uint32, error) {
	orig := make(map[ipaddr.Addr]bool, len(eps))
	for _, a := range eps {
		orig[a] = true
	}
	limit := uint32(1 << 16)
	if len(eps) > 0 && !hasIPv6(eps) {
		limit = 1 << 8
	}
	for _, noMulticast := range []bool{true, false} {
	step:
		for s := uint32(1); s < limit; s++ {
			seen := make(map[ipaddr.Addr]bool, len(eps)*n)
			for _, a := range eps {
				for k := 1; k < n; k++ {
					c := shiftAddr(a, uint32(k)*s)
					if orig[c] || seen[c] || noMulticast && c.IsMulticast() {
						continue step
					}
					seen[c] = true
				}
			}
			return s, nil
		}
	}
	return 0, inputErrf("--replicate %d: no address step gives the %d endpoints %d copies with distinct addresses (IPv4 copies change the first octet: at most 255 copies)", n, len(eps), n)
}

func hasIPv6(eps []ipaddr.Addr) bool {
	for _, a := range eps {
		if a.Is6() {
			return true
		}
	}
	return false
}

// json is run.json's replication.
func (r *replication) json() *records.Replication {
	if r == nil {
		return nil
	}
	out := &records.Replication{Copies: r.copies, PerTrace: r.perFile, AddressStep: int(r.step), OffsetsNs: r.offset, RackShift: r.shift}
	return out
}

// String describes the copies for the line before the run.
func (r *replication) String() string {
	if r == nil {
		return ""
	}
	s := fmt.Sprintf("%d copies", r.copies)
	if r.maxOffset() > 0 {
		s += fmt.Sprintf(", offsets up to %v", time.Duration(r.maxOffset()))
	}
	return s
}
