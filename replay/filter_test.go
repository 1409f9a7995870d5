package replay

import (
	"encoding/json"
	"testing"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/ingest/filter"
)

// --filter through a replay: the demo trace filtered to its RoCEv2 packets (UDP to
// port 4791, counted here with a predicate of our own over the unfiltered capture)
// injects exactly those, counts the rest filtered in run.json's trace.skipped (every
// packet replayed or counted), and records the expression in options.filter.
func TestFilterReplay(t *testing.T) {
	demo := repoPath(t, "testdata/pcaps/demo.pcap")
	r, err := ingest.Open([]string{demo}, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var p ingest.Packet
	var roce, all int64
	for {
		ok, err := r.Next(&p)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		all++
		if p.Proto == 17 && p.DstPort == 4791 {
			roce++
		}
	}
	r.Close()
	if roce == 0 || roce == all {
		t.Fatalf("%d RoCE packets of %d: the demo should hold some of each", roce, all)
	}
	f, err := filter.Parse("udp dst port 4791")
	if err != nil {
		t.Fatal(err)
	}
	run, _ := runTraceAbs(t, demo, func(o *Options) { o.Filter = f })
	s := run.Simulation
	if s.Injected != roce || s.Delivered+s.DroppedTotal()+s.UndrainedTotal() != roce {
		t.Errorf("injected %d (delivered %d, dropped %d, undrained %d), want the %d RoCE packets", s.Injected, s.Delivered, s.DroppedTotal(), s.UndrainedTotal(), roce)
	}
	var tr struct {
		Skipped map[string]int64 `json:"skipped"`
	}
	if err := json.Unmarshal(run.Trace, &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Skipped["filtered"] != all-roce {
		t.Errorf("trace.skipped.filtered = %d, want %d", tr.Skipped["filtered"], all-roce)
	}
	if run.Options.Filter != "udp dst port 4791" {
		t.Errorf("options.filter = %q", run.Options.Filter)
	}
	back, err := OptionsFromRun(&run.Options)
	if err != nil || back.Filter == nil || back.Filter.String() != "udp dst port 4791" {
		t.Errorf("OptionsFromRun: filter %v, %v", back.Filter, err)
	}
}
