package switchmodel

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// docs/model.md#headroom-sizing and #invariants: under Headroom auto no lossless packet
// is ever dropped, for any cell size, port speed and frame-size mix. The sweep runs an
// 8-to-1 lossless incast at line rate with a fixed, low Xoff (many pause cycles) while
// the switch's port toward every sender is kept busy with lossy jumbo frames from a
// host of its own, so a pause frame waits behind a jumbo on the wire, at cell sizes
// 1..1024 B, speeds 10..400 Gb/s and three frame mixes: 64-byte frames (the most
// cells per wire byte), jumbo frames, and a random mix of 64..9018-byte frames
// (seeded). The worst case is the sizing formula's: the frame whose arrival crossed
// Xoff, a jumbo ahead of the pause frame, the pause frame, the link's flight both
// ways and the sender's jumbo in progress all land in headroom.
func TestAutoHeadroomSweepNoLosslessDrop(t *testing.T) {
	cells := []units.Bytes{1, 16, 64, 256, 1024}
	speeds := []units.BitRate{10 * units.Gbps, 25 * units.Gbps, 100 * units.Gbps, 400 * units.Gbps}
	mixes := []string{"small", "jumbo", "mixed"}
	if testing.Short() {
		cells = []units.Bytes{16, 256}
	}
	const senders = 8
	for _, cell := range cells {
		for _, c := range speeds {
			for _, mix := range mixes {
				t.Run(fmt.Sprintf("cell%d/%v/%s", cell, c, mix), func(t *testing.T) {
					cfg := defaultSwitch()
					cfg.CellSize = cell
					cfg.Xoff = 40_000 // pause early and often
					if cell == 1024 {
						cfg.BufferSize = 64 * units.MiB // 1 KiB cells at 400 Gb/s need more headroom than 32 MiB
					}
					// Host 0 receives, hosts 1..8 send, host 8+i keeps the port to sender i busy.
					st := newStar(t, 2*senders+1, cfg, LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
					if len(st.warns) != 0 {
						t.Fatalf("warnings with auto headroom: %v", st.warns)
					}
					rng := rand.New(rand.NewPCG(uint64(cell), uint64(c)))
					lengths := map[string][]int32{"small": {46}, "jumbo": {9000, 8999, 8990, 8900, 8500}, "mixed": {46, 46, 200, 1500, 4000, 9000, 9000}}[mix]
					var specs []pktSpec
					for s := int32(1); s <= senders; s++ {
						// Each sender sends back to back at line rate for about 60 us.
						var at units.Time
						for at < 60*units.Microsecond {
							l := lengths[rng.IntN(len(lengths))]
							specs = append(specs, pktSpec{at: at, src: s, dst: 0, length: l, dscp: 3 << 3, flow: int64(s)})
							at += units.SerializationTime(int64(FrameSize(l))+20, c)
						}
						// Lossy jumbos to the sender at line rate from its own host, so the
						// switch's port toward it is always in the middle of a jumbo.
						// Lengths and start vary so that over the pause cycles the pause meets
						// the jumbo ahead of it at every phase.
						at = units.Time(rng.Int64N(int64(units.SerializationTime(9038, c))))
						for at < 62*units.Microsecond {
							l := 9000 - rng.Int32N(300)
							specs = append(specs, pktSpec{at: at, src: s + senders, dst: s, length: l, flow: int64(s + senders)})
							at += units.SerializationTime(int64(FrameSize(l))+20, c)
						}
					}
					newInjector(st.net, specs)
					st.eng.Run()
					cn := st.net.Counters()
					if cn.DroppedTotal() != 0 {
						t.Fatalf("drops %v under Headroom auto (%d B per port)", cn.Dropped, st.sw.Headroom(1, 1))
					}
					if len(st.obs.pfcOf(PFCTxPause)) == 0 {
						t.Fatal("no pause: the case does not exercise headroom")
					}
					checkDrained(t, st.net)
				})
			}
		}
	}
}
