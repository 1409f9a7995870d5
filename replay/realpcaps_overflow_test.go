package replay

import (
	"errors"
	"path/filepath"
	"testing"
)

// web-client-508-flows-qinq.pcap jumps from 2010-06-29 to 2015-01-03 after packet 26
// (duration 142,449,834.96 s). At speedup 1 that is 1.42e20 ps, beyond int64 (9.2e18
// ps = 106.75 days): run.go injectTime computes units.Time(d)*units.Nanosecond, which
// wraps negative; Engine.Schedule clamps it to Now, so the last ~4,657 packets are all
// injected at 8.580081 s in one burst and the run reports success (sim_time 8.58 s).
// Want: an ErrInput error naming the file and the span (suggesting --speedup), or
// correct injection times.
func TestRealPcapTimeOverflow(t *testing.T) {
	dir := realPcaps(t)
	pr, err := Prepare(Options{Traces: []string{filepath.Join(dir, "web-client-508-flows-qinq.pcap")}})
	if err == nil {
		r, rerr := pr.Run(filepath.Join(t.TempDir(), "run"), "")
		if rerr == nil {
			const dur = 142_449_834.964567989
			if float64(r.Simulation.SimTimePs) < dur*1e12 {
				t.Fatalf("run succeeded with sim_time %d ps for a %.0f s capture: injection times wrapped", r.Simulation.SimTimePs, dur)
			}
			return
		}
		err = rerr
	}
	if !errors.Is(err, ErrInput) {
		t.Fatalf("error %v is not an input error", err)
	}
}
