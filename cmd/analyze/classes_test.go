package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/ingest/filter"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/replay"
)

// The report's traffic classes table (docs/model.md#classification): each class's
// DSCP code points under the run's DSCP-to-TC map, its pool, PFC and ECN.
func TestClassesTable(t *testing.T) {
	def := config.Default().Switch
	mapped := config.Default().Switch
	mapped.DscpToTc = map[int]int{24: 0, 46: 3}
	for _, c := range []struct {
		name    string
		s       *config.Switch
		caption string
		rows    [][]string
	}{
		{"default", &def, "Traffic classes (DSCP / 8)", [][]string{
			{"0", "0-7", "lossy", "no", "yes"}, {"1", "8-15", "lossy", "no", "yes"}, {"2", "16-23", "lossy", "no", "yes"},
			{"3", "24-31", "lossless", "yes", "yes"}, {"4", "32-39", "lossless", "yes", "yes"}, {"5", "40-47", "lossy", "no", "yes"},
			{"6", "48-55", "lossy", "no", "yes"}, {"7", "56-63", "lossy", "no", "yes"}}},
		{"DscpToTc {24: 0, 46: 3}", &mapped, "Traffic classes (Switch.DscpToTc, DSCP / 8 for the code points it does not list)", [][]string{
			{"0", "0-7, 24", "lossy", "no", "yes"}, {"1", "8-15", "lossy", "no", "yes"}, {"2", "16-23", "lossy", "no", "yes"},
			{"3", "25-31, 46", "lossless", "yes", "yes"}, {"4", "32-39", "lossless", "yes", "yes"}, {"5", "40-45, 47", "lossy", "no", "yes"},
			{"6", "48-55", "lossy", "no", "yes"}, {"7", "56-63", "lossy", "no", "yes"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := classesTable(c.s)
			if tb.Caption != c.caption || !reflect.DeepEqual(tb.Rows, c.rows) {
				t.Errorf("caption %q rows %q\nwant %q rows %q", tb.Caption, tb.Rows, c.caption, c.rows)
			}
		})
	}
}

// A run with Switch.DscpToTc records the map in run.json's configuration, and its
// report shows the classes as the run had them, and the run's --filter.
func TestReportShowsDscpToTc(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "cs3.pcap")
	s := &tracegen.Scenario{Name: "cs3.pcap", Seed: 7, Epoch: time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC),
		Generators: []tracegen.Generator{&tracegen.Stream{Src: tracegen.HostAddr(0, 0, 0), Dst: tracegen.HostAddr(1, 1, 0),
			Class: tracegen.Class{Name: "cs3", Proto: tracegen.UDPData.Proto, DSCP: 24}, Duration: 50 * units.Microsecond, Length: 1500, Interval: 2 * units.Microsecond}}}
	if _, err := s.WriteFile(trace); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Parse(nil, "", []string{"DscpToTc={24: 0}"})
	if err != nil {
		t.Fatal(err)
	}
	flt, err := filter.Parse("udp or tcp")
	if err != nil {
		t.Fatal(err)
	}
	pr, err := replay.Prepare(replay.Options{Traces: []string{trace}, Config: cfg, Version: "test", Filter: flt})
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	if _, err := pr.Run(run, ""); err != nil {
		t.Fatal(err)
	}
	var back config.Config
	if err := json.Unmarshal(readRunJSON(t, run).Config, &back); err != nil || !reflect.DeepEqual(back.Switch.DscpToTc, map[int]int{24: 0}) {
		t.Errorf("run.json config: DscpToTc %v (%v), want map[24:0]", back.Switch.DscpToTc, err)
	}
	if code, _, stderr := runCmd(run, "-q", "--bootstrap", "20"); code != 0 {
		t.Fatalf("analyze: exit %d, %s", code, stderr)
	}
	md, err := os.ReadFile(filepath.Join(run, "analysis", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Traffic classes (Switch.DscpToTc", "| 0 | 0-7, 24 | lossy | no | yes |", "| 3 | 25-31 | lossless | yes | yes |", "udp or tcp"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
