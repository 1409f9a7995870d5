package replay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// run.json says how the trace was replayed: the transport ("open": every packet
// re-injected at its captured time) and the replay's options as fields, defaults
// filled in, not only inside the command line.
func TestRunJSONOptions(t *testing.T) {
	cfg := config.Default()
	cfg.Switch.LoadBalancingMethod = ecmp.Flowlet
	cfg.Switch.EcmpHashMethod = ecmp.CRC16
	_, out := runTrace(t, "testdata/pcaps/demo.pcap", func(o *Options) {
		o.Config = &cfg
		o.Speedup = 2
		o.Oversize = OversizeDrop
		o.MaxDrain = 5 * units.Millisecond
	})
	data, err := os.ReadFile(filepath.Join(out, records.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Transport string         `json:"transport"`
		Options   map[string]any `json:"options"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Transport != "open" {
		t.Errorf("transport %q, want \"open\"", got.Transport)
	}
	trace, _ := filepath.Abs(repoPath(t, "testdata/pcaps/demo.pcap"))
	want := map[string]any{"speedup": 2.0, "hosts": "subnet", "rack_prefix": 24.0, "oversize": "drop",
		"max_drain_ps": 5e9, "lb": "flowlet", "hash": "crc16", "traces": []any{trace}, "reorder_window_ns": 0.0,
		"window_start_ns": 0.0, "window_absolute": false, "window_duration_ns": 0.0, "max_idle_ns": 0.0,
		"rack_prefix6": 64.0, "family": "all", "filter": ""}
	for k, v := range want {
		if !reflect.DeepEqual(got.Options[k], v) {
			t.Errorf("options.%s = %v, want %v", k, got.Options[k], v)
		}
	}
	if len(got.Options) != len(want) {
		t.Errorf("options %v, want exactly the keys of %v", got.Options, want)
	}
}
