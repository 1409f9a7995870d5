package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sampleRun() *Run {
	return &Run{
		Version:    "0.1.0",
		Command:    []string{"replay", "run", "-o", "out/demo", "testdata/pcaps/demo.pcap"},
		Seed:       1,
		HashMethod: HashCRC32WithSalt,
		Config:     json.RawMessage(`{"Topology":{"Pods":2},"BufferSize":"32MiB"}`),
		Topology: Topology{Nodes: 168, Links: 192, Hosts: 128, BDPBytes: 166_000, BaseRTTPs: 13_280_000,
			Switches: []Switch{
				{Name: "rack-p0-r0", Tier: TierRack, BandwidthBps: 2_000_000_000_000, SwitchingCapacityBps: 2_000_000_000_000},
				{Name: "spine-s0-0", Tier: TierSpine, BandwidthBps: 200_000_000_000, SwitchingCapacityBps: 100_000_000_000, Oversubscribed: true},
			}},
		Trace: json.RawMessage(`{"files":["demo.pcap"],"packets":1000,"intra_host":3,"oversize":0}`),
		Simulation: Simulation{SimTimePs: 1_000_000_000, WallS: 0.25, Events: 12345, PacketHops: 5000, Injected: 997,
			Delivered: 990, Dropped: map[DropReason]int64{ReasonEgressLimit: 4, ReasonHeadroom: 1}, LosslessDrops: 1,
			CEMarked: 17, PFCFrames: 6, Undrained: map[string]int64{"rack-p0-r0": 2}},
		Records:  map[string]int64{DropsFile: 5, PortsFile: 1200},
		Complete: true,
	}
}

func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestRunRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), RunFile)
	want := sampleRun()
	if err := WriteRun(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRun(path)
	if err != nil {
		t.Fatal(err)
	}
	if want.SchemaVersion != SchemaVersion || got.SchemaVersion != SchemaVersion {
		t.Errorf("schema_version written %d, read %d", want.SchemaVersion, got.SchemaVersion)
	}
	// Raw JSON comes back re-indented: compare it compacted.
	if compactJSON(t, got.Config) != compactJSON(t, want.Config) || compactJSON(t, got.Trace) != compactJSON(t, want.Trace) {
		t.Errorf("config/trace changed: %s %s", got.Config, got.Trace)
	}
	got.Config, got.Trace = want.Config, want.Trace
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	if got.Simulation.DroppedTotal() != 5 || got.Simulation.UndrainedTotal() != 2 {
		t.Errorf("totals %d dropped, %d undrained", got.Simulation.DroppedTotal(), got.Simulation.UndrainedTotal())
	}
	if fromDir, err := ReadRun(filepath.Dir(path)); err != nil || fromDir.Seed != 1 {
		t.Errorf("ReadRun(dir): %v", err)
	}
}

// TestRunKeys pins the JSON keys issue 5 names and the spelling of enumerations.
func TestRunKeys(t *testing.T) {
	data, err := json.Marshal(sampleRun())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "schema_version", "command", "seed", "config", "topology", "trace",
		"simulation", "records", "complete", "hash_method"} {
		if _, ok := m[k]; !ok {
			t.Errorf("run.json lacks %q", k)
		}
	}
	topo := m["topology"].(map[string]any)
	for _, k := range []string{"nodes", "links", "hosts", "bdp_bytes", "base_rtt_ps", "switches"} {
		if _, ok := topo[k]; !ok {
			t.Errorf("topology lacks %q", k)
		}
	}
	sw := topo["switches"].([]any)[1].(map[string]any)
	for k, v := range map[string]any{"name": "spine-s0-0", "tier": "spine", "bandwidth_bps": 2e11,
		"switching_capacity_bps": 1e11, "oversubscribed": true} {
		if sw[k] != v {
			t.Errorf("switches[1].%s = %v, want %v", k, sw[k], v)
		}
	}
	sim := m["simulation"].(map[string]any)
	for _, k := range []string{"sim_time_ps", "wall_s", "events", "packet_hops", "injected", "delivered", "dropped",
		"lossless_drops", "ce_marked", "pfc_frames", "undrained"} {
		if _, ok := sim[k]; !ok {
			t.Errorf("simulation lacks %q", k)
		}
	}
	if d := sim["dropped"].(map[string]any); d["egress-limit"] != 4.0 || d["headroom"] != 1.0 {
		t.Errorf("dropped = %v, want reason names as keys", d)
	}
	if m["hash_method"] != "crc32WithSalt" {
		t.Errorf("hash_method = %v", m["hash_method"])
	}
}

func TestReadRunRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	incomplete := sampleRun()
	incomplete.Complete = false
	incPath := filepath.Join(dir, "incomplete.json")
	if err := WriteRun(incPath, incomplete); err != nil {
		t.Fatal(err)
	}
	run, err := ReadRun(incPath)
	if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), incPath) {
		t.Errorf("incomplete run: %v, want ErrIncomplete naming the file", err)
	}
	if run == nil || run.Simulation.Injected != 997 {
		t.Errorf("incomplete run not returned for inspection: %+v", run)
	}
	for _, tc := range []struct {
		name, content string
		want          error
		msg           string
	}{
		{"v1.json", `{"schema_version": 1, "complete": true}`, ErrSchemaVersion, "schema_version 1, this build reads 2 to 3 (written by an older tracefabric: replay the trace again"},
		{"v4.json", `{"schema_version": 4, "complete": true}`, ErrSchemaVersion, "schema_version 4, this build reads 2 to 3 (written by a newer tracefabric"},
		{"foreign.json", `{"name": "something else"}`, ErrNotRunFile, "has no schema_version"},
		{"null.json", `null`, ErrNotRunFile, "has no schema_version"},
		{"array.json", `[1]`, ErrNotRunFile, "not a tracefabric run.json"},
		{"garbage.json", `{"schema_version": 1,`, ErrNotRunFile, "not a tracefabric run.json"},
		{"badreason.json", `{"schema_version": 2, "complete": true, "simulation": {"dropped": {"tail": 1}}}`, ErrNotRunFile, "unknown drop reason \"tail\""},
	} {
		p := write(tc.name, tc.content)
		_, err := ReadRun(p)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.msg) ||
			!strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want %v naming the file and saying %q", tc.name, err, tc.want, tc.msg)
		}
	}
	if _, err := ReadRun(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing run.json: %v", err)
	}
}

func TestWriteRunDeterministic(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if err := WriteRun(a, sampleRun()); err != nil {
		t.Fatal(err)
	}
	if err := WriteRun(b, sampleRun()); err != nil {
		t.Fatal(err)
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Error("the same run gave different run.json bytes")
	}
}
