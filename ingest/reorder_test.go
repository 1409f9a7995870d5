package ingest

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// TestSortBufChunks pushes packets with occasional late ones through the chunked
// reorder buffer, with pops interleaved, across many chunk boundaries, and checks
// every pop against a plain slice kept stably sorted by timestamp.
func TestSortBufChunks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hold      int // pop while more than this many are held
		lateEvery int
		lateBy    int64
	}{
		{"in order, window of 3 chunks", 3*chunkLen + 17, 0, 0},
		{"late within 2 chunks", 2*chunkLen + 5, 50, 2 * chunkLen},
		{"late by 1, tiny window", 1, 3, 1},
		{"many equal timestamps", chunkLen / 2, 7, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			var b sortBuf
			var ref []Packet
			ts := int64(0)
			pops := 0
			pop := func() {
				var p Packet
				b.popInto(&p)
				if p != ref[0] {
					t.Fatalf("pop %d: got %+v, want %+v", pops, p, ref[0])
				}
				ref = ref[1:]
				pops++
			}
			for i := 0; i < 12*chunkLen; i++ {
				if tc.lateEvery == 0 || i%tc.lateEvery != 0 || tc.lateBy == 0 {
					ts += int64(rng.IntN(3)) // equal timestamps happen
				}
				pts := ts
				if tc.lateEvery > 0 && i%tc.lateEvery == 0 {
					pts -= rng.Int64N(tc.lateBy + 1)
				}
				b.push(&Packet{Timestamp: pts, Index: int64(i), Src: testAddr(i), Dst: testAddr(i + 2), HeaderLen: 20 + 40*uint32(i%2)})
				k, _ := slices.BinarySearchFunc(ref, pts+1, func(p Packet, t int64) int { return int(p.Timestamp - t) })
				for k > 0 && ref[k-1].Timestamp > pts {
					k--
				}
				ref = slices.Insert(ref, k, Packet{Timestamp: pts, Index: int64(i), Src: testAddr(i), Dst: testAddr(i + 2), HeaderLen: 20 + 40*uint32(i%2)})
				if b.len() != len(ref) {
					t.Fatalf("after push %d: len %d, want %d", i, b.len(), len(ref))
				}
				for b.len() > tc.hold {
					pop()
				}
				if b.len() > 0 && (b.frontTS() != ref[0].Timestamp || b.at(0).index != ref[0].Index) {
					t.Fatalf("after push %d: front index %d, want %d", i, b.at(0).index, ref[0].Index)
				}
			}
			for b.len() > 0 {
				pop()
			}
			if len(ref) != 0 {
				t.Fatalf("%d packets lost", len(ref))
			}
			if len(b.cs)+len(b.spare) > tc.hold/chunkLen+2 {
				t.Errorf("%d chunks for at most %d packets held", len(b.cs)+len(b.spare), tc.hold+1)
			}
			b.release()
			if len(b.cs) != 0 || len(b.spare) != 0 || b.len() != 0 {
				t.Errorf("release left %d chunks, %d spares, %d packets", len(b.cs), len(b.spare), b.len())
			}
		})
	}
}

// TestSortBufSteadyStateAllocs: a buffer that holds a window of packets and moves
// on allocates nothing once it has its chunks.
func TestSortBufSteadyStateAllocs(t *testing.T) {
	var b sortBuf
	ts := int64(0)
	step := func() {
		ts++
		b.push(&Packet{Timestamp: ts, Src: testAddr(int(ts)), Dst: testAddr(int(ts))})
		if b.len() > 3*chunkLen {
			var p Packet
			b.popInto(&p)
		}
	}
	for i := 0; i < 10*chunkLen; i++ {
		step()
	}
	if a := testing.AllocsPerRun(5*chunkLen, step); a != 0 {
		t.Errorf("%v allocations per packet in steady state, want 0", a)
	}
}

// testAddr is an IPv4 address for even i and an IPv6 address for odd i.
func testAddr(i int) ipaddr.Addr {
	if i%2 == 1 {
		return ipaddr.From16([16]byte{0x20, 0x01, 0x0d, 0xb8, 12: byte(i >> 24), 13: byte(i >> 16), 14: byte(i >> 8), 15: byte(i)})
	}
	return ipaddr.FromUint32(uint32(i))
}

// TestHeldRoundTrip: a packet of either family, every field set, comes out of the
// buffer as it went in (the compact form loses nothing but FileIndex, which the
// source sets), and the IPv6 side table reuses its slots.
func TestHeldRoundTrip(t *testing.T) {
	var b sortBuf
	pkts := []Packet{
		{Timestamp: 5, Index: 7, CapLen: 96, TotalLen: 1500, HeaderLen: 60, Src: ipaddr.MustParse("10.1.2.3"), Dst: ipaddr.MustParse("255.255.255.255"),
			SrcPort: 4000, DstPort: 80, FragOffset: 0, Proto: 6, DSCP: 46, ECN: 3, Fragment: true, TCPDataOffset: 15, TCPFlags: 0xff},
		{Timestamp: 3, Index: 8, CapLen: 80, TotalLen: 65575, HeaderLen: 65535 + 40, Src: ipaddr.MustParse("2001:db8::1"), Dst: ipaddr.MustParse("::ffff:10.0.0.1"),
			SrcPort: 1, DstPort: 4791, FragOffset: 65528, Proto: 17, DSCP: 26, ECN: 2, Fragment: true, UDPPayload0: 0x81, HasUDPPayload0: true},
		{Timestamp: 4, Index: 9, TotalLen: 48, HeaderLen: 40, Src: ipaddr.MustParse("fe80::1"), Dst: ipaddr.MustParse("ff02::1"), Proto: 58},
	}
	for range 3 { // the side table's slots are freed and reused
		for i := range pkts {
			b.push(&pkts[i])
		}
		for _, want := range []Packet{pkts[1], pkts[2], pkts[0]} { // by timestamp
			var got Packet
			b.popInto(&got)
			if got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		}
	}
	if len(b.v6) != 2 || len(b.free) != 2 {
		t.Errorf("side table %d slots, %d free; want 2 and 2", len(b.v6), len(b.free))
	}
	if unsafe.Sizeof(held{}) != 48 {
		t.Errorf("held is %d bytes, want 48", unsafe.Sizeof(held{}))
	}
}
