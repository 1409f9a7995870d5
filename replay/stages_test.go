package replay

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/records"
)

// fiveStageAllSpines is a five-stage fabric without planes: every spine of a pod is
// joined to every super-spine, so a super-spine chooses among the destination pod's
// 2 spines (stage 3), after the leaf chose among its 2 spines (stage 1) and the
// spine among the 4 super-spines (stage 2).
const fiveStageAllSpines = `Generator: five-stage
Pods: 4
LeavesPerPod: 4
HostsPerLeaf: 8
SpinesPerPod: 2
SuperSpinesPerPlane: 2
Planes: false
HostLink: {Speed: 100Gbps, PropagationDelay: 1us}
LeafSpineLink: {Speed: 200Gbps, PropagationDelay: 1us}
SpineSuperLink: {Speed: 400Gbps, PropagationDelay: 2us}
`

// writeTopology writes a topology file into a test directory.
func writeTopology(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fabric.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readStages reads stages.arrow: per flow id, the member at each stage.
func readStages(t *testing.T, dir string) (map[int64]map[uint8]int32, []records.StageRow, []string) {
	t.Helper()
	rows, nodes, err := records.ReadAll(records.OpenStages(filepath.Join(dir, records.StagesFile)))
	if err != nil {
		t.Fatal(err)
	}
	by := map[int64]map[uint8]int32{}
	for _, r := range rows {
		if by[r.FlowID] == nil {
			by[r.FlowID] = map[uint8]int32{}
		}
		if _, dup := by[r.FlowID][r.Stage]; dup {
			t.Fatalf("flow %d: stage %d twice", r.FlowID, r.Stage)
		}
		by[r.FlowID][r.Stage] = r.Member
	}
	return by, rows, nodes
}

// ecmpKey is the 13-byte IPv4 key of docs/model.md#ecmp-hashing, built here from
// the flow's 5-tuple (TCP and UDP flows of unfragmented packets).
func ecmpKey(f *records.FlowRow) []byte {
	k := make([]byte, 13)
	s, d := f.Src.As16(), f.Dst.As16()
	copy(k[0:4], s[12:])
	copy(k[4:8], d[12:])
	k[8] = f.Proto
	binary.BigEndian.PutUint16(k[9:], f.Sport)
	binary.BigEndian.PutUint16(k[11:], f.Dport)
	return k
}

// TestStagesFiveStagePolarization: in a five-stage fabric with super-spines choosing
// among a pod's spines, stages.arrow records the member of every ECMP stage, and
// the analysis measures the polarization between consecutive stages from them.
// Expectations independent of the code: with the unsalted crc32 every switch
// computes the same CRC-32/IEEE of the flow's key (computed here with hash/crc32),
// so the members are crc mod 2, crc mod 4 and crc mod 2 at stages 1, 2 and 3: the
// stage-3 member is the stage-2 member mod 2, which makes the AMI between stages 2
// and 3 exactly 1 (one determines the other). crc32WithSalt salts each switch
// apart: its AMI reads 0 within the sampling noise of 4,000 flows. 4,000 flows of
// many-flows.pcap, every one between two pods.
func TestStagesFiveStagePolarization(t *testing.T) {
	file := writeTopology(t, fiveStageAllSpines)
	for _, method := range []string{"crc32", "crc32WithSalt"} {
		t.Run(method, func(t *testing.T) {
			run, out := runTrace(t, "testdata/pcaps/many-flows.pcap", func(o *Options) {
				o.Config = parseConfig(t, "", fmt.Sprintf("Topology.File=%q", file), "Switch.EcmpHashMethod="+method)
			})
			stages, rows, nodes := readStages(t, out)
			flows := readFlows(t, out)
			if int(run.Records[records.StagesFile]) != len(rows) || len(flows) != 4000 {
				t.Fatalf("%d stage rows (run.json %d), %d flows", len(rows), run.Records[records.StagesFile], len(flows))
			}
			// Every flow crosses pods: three ECMP stages, at a leaf, a spine and a
			// super-spine (names of testdata's five-stage generator).
			prefix := map[uint8]string{1: "leaf-", 2: "spine-", 3: "super-"}
			for _, r := range rows {
				if p := prefix[r.Stage]; p == "" || len(nodes[r.Node]) < len(p) || nodes[r.Node][:len(p)] != p {
					t.Fatalf("flow %d stage %d at %s", r.FlowID, r.Stage, nodes[r.Node])
				}
			}
			sizes := map[uint8]uint32{1: 2, 2: 4, 3: 2}
			follows := 0
			for i := range flows {
				f := &flows[i]
				m := stages[f.FlowID]
				if len(m) != 3 {
					t.Fatalf("flow %d: stages %v, want 1, 2 and 3", f.FlowID, m)
				}
				if m[1] != f.RackMember || m[2] != f.FabricMember {
					t.Fatalf("flow %d: stages 1, 2 = %d, %d; flows.arrow rack_member %d, fabric_member %d", f.FlowID, m[1], m[2], f.RackMember, f.FabricMember)
				}
				if m[3] == m[2]%2 {
					follows++
				}
				if method != "crc32" {
					continue
				}
				h := crc32.ChecksumIEEE(ecmpKey(f))
				for k, n := range sizes {
					if m[k] != int32(h%n) {
						t.Fatalf("flow %d stage %d: member %d, crc32 %08x mod %d = %d", f.FlowID, k, m[k], h, n, h%n)
					}
				}
			}
			if method == "crc32" && follows != len(flows) || method != "crc32" && (follows < 1800 || follows > 2200) {
				// Salted: independent halves, 2,000 +- 5 sd (sd 31.6).
				t.Errorf("%d of %d flows' stage-3 member is their stage-2 member mod 2", follows, len(flows))
			}

			r, err := analysis.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			sp := r.Flows.StagePolarizations(func(n analysis.NodeID) analysis.Role { return r.Roles[n] })
			if len(sp) != 2 || sp[0].From != 1 || sp[1].From != 2 || sp[1].Flows != 4000 || !sp[1].FromStagesArrow {
				t.Fatalf("stage pairs %+v", sp)
			}
			if got := sp[1].Name(); got != "stage 2 -> 3 (spine -> super-spine)" {
				t.Errorf("pair name %q", got)
			}
			ami := sp[1].AMI
			if method == "crc32" && math.Abs(ami-1) > 1e-9 || method != "crc32" && math.Abs(ami) > 0.02 {
				t.Errorf("AMI between stages 2 and 3: %v", ami)
			}
			t.Logf("%s: AMI stage 1-2 %.4f, stage 2-3 %.4f (%d of %d flows: stage 3 = stage 2 mod 2)", method, sp[0].AMI, ami, follows, len(flows))
		})
	}
}

// TestStagesWrittenOnlyForDeeperChoices: stages.arrow exists only when a fabric has
// ECMP choices that rack_member and fabric_member do not hold. The default Clos and
// the five-stage fabric with planes (a super-spine has one link to each pod) have
// none; a leaf-spine with two parallel links per spine has one (the spine chooses
// between the two links down to a leaf), at stage 2 of every flow between leaves.
func TestStagesWrittenOnlyForDeeperChoices(t *testing.T) {
	for _, tc := range []struct {
		name, topology string
		want           bool
	}{
		{"clos", "", false},
		{"five-stage planes", repoPath(t, "testdata/topologies/five-stage.yaml"), false},
		{"leaf-spine parallel", writeTopology(t, "Generator: leaf-spine\nLeaves: 8\nSpines: 2\nHostsPerLeaf: 16\nLinksPerSpine: 2\n"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, out := runTrace(t, "testdata/pcaps/demo.pcap", func(o *Options) {
				o.Config = parseConfig(t, "", fmt.Sprintf("Topology.File=%q", tc.topology))
			})
			_, listed := run.Records[records.StagesFile]
			_, err := os.Stat(filepath.Join(out, records.StagesFile))
			if listed != tc.want || (err == nil) != tc.want {
				t.Fatalf("stages.arrow listed %v, exists %v; want %v", listed, err == nil, tc.want)
			}
			if !tc.want {
				return
			}
			stages, _, _ := readStages(t, out)
			flows := readFlows(t, out)
			between := 0
			for i := range flows {
				f := &flows[i]
				m := stages[f.FlowID]
				if f.RackMember < 0 { // within a leaf: no ECMP stage
					if len(m) != 0 {
						t.Errorf("flow %d stays on its leaf but has stages %v", f.FlowID, m)
					}
					continue
				}
				if f.Delivered == 0 { // a flow dropped before it left a switch has fewer stages
					continue
				}
				between++
				// Leaf: 2 spines x 2 links = 4 members; spine: 2 links down.
				if len(m) != 2 || m[1] != f.RackMember || m[1] < 0 || m[1] > 3 || m[2] < 0 || m[2] > 1 {
					t.Errorf("flow %d: stages %v (rack_member %d)", f.FlowID, m, f.RackMember)
				}
			}
			if between == 0 {
				t.Fatal("no flow between leaves")
			}
		})
	}
}
