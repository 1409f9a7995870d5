package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/records"
)

// realCaptures lists the real captures of ../shared/pcaps with unicast traffic and
// the options each needs to replay: --max-idle 1s for those whose span does not fit
// the simulator's clock (the error suggests it), and reordering off (time never goes
// backwards in a replay) for those whose timestamps go back by more than the reorder
// window (interfaces with clocks years apart). A capture without unicast packets is
// left out, with a log line; any other Prepare error fails the test.
func realCaptures(t *testing.T, mutate func(*Options)) map[string]func(*Options) {
	t.Helper()
	dir := realPcaps(t)
	var files []string
	for _, pat := range []string{"*.pcap", "*.pcapng"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, m...)
	}
	slices.Sort(files)
	out := map[string]func(*Options){}
	for _, path := range files {
		opt := Options{Traces: []string{path}}
		if mutate != nil {
			mutate(&opt)
		}
		pr, err := PrepareMapping(opt)
		if err == nil && pr.Summary.Skipped["out-of-order"] > 0 {
			opt.ReorderWindow = -1
		}
		if err == nil {
			_, err = Prepare(opt)
		}
		switch {
		case err == nil:
		case strings.Contains(err.Error(), "no IP unicast packets"):
			t.Logf("%s: %v: not replayed", filepath.Base(path), err)
			continue
		case errors.Is(err, ErrInput) && strings.Contains(err.Error(), "--max-idle"):
			opt.MaxIdle = time.Second
		case errors.Is(err, ErrHostMap):
			// More endpoints than the default 128 hosts (tls-browsing's 167): 32 a rack.
			cfg := config.Default()
			if opt.Config != nil {
				cfg = *opt.Config
			}
			cfg.Topology.HostsPerRack = 32
			opt.Config = &cfg
		default:
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		reorder, idle, cfg := opt.ReorderWindow, opt.MaxIdle, opt.Config
		tweak := func(o *Options) {
			if mutate != nil {
				mutate(o)
			}
			o.ReorderWindow, o.MaxIdle = reorder, idle
			if cfg != nil {
				o.Config = cfg
			}
		}
		out[path] = tweak
	}
	if len(out) < 20 {
		t.Fatalf("only %d real captures with unicast traffic in %s", len(out), dir)
	}
	return out
}

// Every real capture with unicast traffic replays open and closed loop through the
// default fabric (docs/model.md#application-model): no error, conservation per flow
// and fabric-wide, every completed flow at least as slow as its ideal, the closed
// loop's flow categories adding up, the same flows in both modes, and the same
// closed-loop records twice. The log has each capture's line of the closed-loop table.
func TestRealPcapsClosedLoop(t *testing.T) {
	caps := realCaptures(t, nil)
	want := expectedIP(t, realPcaps(t))
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range caps {
			if !yield(p) {
				return
			}
		}
	}) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			var tuples [2][]string
			for mi, closed := range []bool{false, true} {
				mut := func(o *Options) {
					caps[path](o)
					if closed {
						cfg := config.Default()
						if o.Config != nil {
							cfg = *o.Config
						}
						cfg.Transport.Mode = config.TransportClosed
						o.Config = &cfg
					}
				}
				r := replayReal(t, path, mut)
				if closed { // open loop's determinism on real captures: TestRealPcapDeterministic
					again := replayReal(t, path, mut)
					sameFiles(t, r.run, r.out, again.out)
				}
				if closed {
					r.checkClosed(t)
				} else {
					r.check(t, want[name], 1)
				}
				for _, f := range r.flows {
					tuples[mi] = append(tuples[mi], fmt.Sprint(f.FlowID, f.Src, f.Dst, f.Proto, f.Sport, f.Dport))
					if f.Completion == records.CompletionComplete && f.FctPs < f.IdealFctPs {
						t.Errorf("flow %d: FCT %d ps < ideal %d ps", f.FlowID, f.FctPs, f.IdealFctPs)
					}
					if (f.IdealFctPs > 0) != (f.SizeBytes > 0) {
						t.Errorf("flow %d: ideal FCT %d ps with %d bytes of data", f.FlowID, f.IdealFctPs, f.SizeBytes)
					}
				}
				t.Log(r.tableLine(name))
			}
			if !slices.Equal(tuples[0], tuples[1]) {
				t.Errorf("open and closed loop have different flows")
			}
		})
	}
}

// checkClosed asserts what holds for every closed-loop run of a real capture: the
// packets the hosts injected are the replayed ones less the intra-host packets and
// the replaced control packets, with oversize pieces and the senders'
// retransmissions; conservation per flow and fabric-wide; closed_loop's categories
// add up to flows.arrow and agree with each flow's transport.
func (r *realRun) checkClosed(t *testing.T) {
	t.Helper()
	s := &r.run.Simulation
	tr := &r.trace
	var rp struct {
		Replaced map[string]int64 `json:"replaced"`
	}
	if err := json.Unmarshal(r.run.Trace, &rp); err != nil {
		t.Fatal(err)
	}
	var replaced int64
	for _, n := range rp.Replaced {
		replaced += n
	}
	if want := tr.Replayed - tr.IntraHost - replaced - tr.Oversize.Packets + tr.Oversize.SplitInto + tr.Oversize.Dropped + s.Retransmits; s.Injected != want {
		t.Errorf("injected %d, want replayed %d - intra-host %d - replaced %d - oversize %d + pieces %d + oversize dropped %d + retransmits %d = %d",
			s.Injected, tr.Replayed, tr.IntraHost, replaced, tr.Oversize.Packets, tr.Oversize.SplitInto, tr.Oversize.Dropped, s.Retransmits, want)
	}
	if s.Injected != s.Delivered+s.DroppedTotal()+s.UndrainedTotal() {
		t.Errorf("injected %d != delivered %d + dropped %d + undrained %d", s.Injected, s.Delivered, s.DroppedTotal(), s.UndrainedTotal())
	}
	var pk, del, drop, und, re int64
	var closed, controlOnly, open int64
	for _, f := range r.flows {
		if f.Packets != f.Delivered+f.Dropped+f.Undrained {
			t.Errorf("flow %d: packets %d != delivered %d + dropped %d + undrained %d", f.FlowID, f.Packets, f.Delivered, f.Dropped, f.Undrained)
		}
		pk, del, drop, und, re = pk+f.Packets, del+f.Delivered, drop+f.Dropped, und+f.Undrained, re+f.Retransmits
		switch {
		case f.Transport == records.TransportOpen:
			open++
		case f.SizeBytes > 0:
			closed++
		default:
			controlOnly++
		}
	}
	if pk != s.Injected || del != s.Delivered || drop != s.DroppedTotal() || und != s.UndrainedTotal() || re != s.Retransmits {
		t.Errorf("flows sum to %d/%d/%d/%d/%d, run.json %d/%d/%d/%d/%d (injected/delivered/dropped/undrained/retransmits)",
			pk, del, drop, und, re, s.Injected, s.Delivered, s.DroppedTotal(), s.UndrainedTotal(), s.Retransmits)
	}
	cl := r.run.ClosedLoop
	if cl == nil {
		t.Fatal("closed loop: run.json has no closed_loop")
	}
	var fallback int64
	for _, n := range cl.Fallback {
		fallback += n
	}
	if cl.Flows != int64(len(r.flows)) || cl.Closed != closed || cl.ControlOnly != controlOnly || cl.Open+fallback != open {
		t.Errorf("closed_loop %+v; flows.arrow: %d flows, %d re-sent, %d control only, %d open loop", cl, len(r.flows), closed, controlOnly, open)
	}
}

// tableLine is the run's line of the closed-loop table: flows, flows re-sent closed
// loop, fallbacks by reason, drops, the share of the flows with data that completed,
// and the FCT slowdown p50/p99 over those (nearest rank).
func (r *realRun) tableLine(name string) string {
	var sl []float64
	var data int
	for _, f := range r.flows {
		if f.SizeBytes == 0 {
			continue
		}
		data++
		if f.Completion == records.CompletionComplete && f.IdealFctPs > 0 {
			sl = append(sl, float64(f.FctPs)/float64(f.IdealFctPs))
		}
	}
	slices.Sort(sl)
	q := func(p float64) string {
		if len(sl) == 0 {
			return "-"
		}
		i := max(0, int(float64(len(sl))*p+0.999999)-1)
		return fmt.Sprintf("%.2f", sl[min(i, len(sl)-1)])
	}
	mode, closed, fb := "open", "-", "-"
	if cl := r.run.ClosedLoop; cl != nil {
		mode, closed = "closed", fmt.Sprint(cl.Closed)
		var parts []string
		for _, k := range records.FallbackReasons {
			if cl.Fallback[k] > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", k, cl.Fallback[k]))
			}
		}
		fb = strings.Join(parts, ", ")
		if fb == "" {
			fb = "0"
		}
		fb += fmt.Sprintf(" (control only %d)", cl.ControlOnly)
	}
	share := "-"
	if data > 0 {
		share = fmt.Sprintf("%.1f%%", 100*float64(len(sl))/float64(data))
	}
	return fmt.Sprintf("| %s | %s | %d | %s | %s | %d | %s | %s / %s |", name, mode, len(r.flows), closed, fb,
		r.run.Simulation.DroppedTotal(), share, q(0.5), q(0.99))
}
