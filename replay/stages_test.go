package replay

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/records"
)

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

// fmix32 is MurmurHash3's 32-bit finalizer (docs/model.md#ecmp-hashing), written
// here from its definition.
func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// saltedHash is crc32WithSalt by its definition (docs/model.md#ecmp-hashing):
// fmix32(CRC-32/IEEE(salt as 4 big-endian bytes || key)).
func saltedHash(salt uint32, key []byte) uint32 {
	b := binary.BigEndian.AppendUint32(nil, salt)
	return fmix32(crc32.ChecksumIEEE(append(b, key...)))
}

// chi2Survival is P(X > x) for X chi-square with df degrees of freedom (closed forms
// of the regularized upper incomplete gamma function at integer and half-integer
// shapes).
func chi2Survival(df int, x float64) float64 {
	y := x / 2
	if df%2 == 0 {
		sum, term := 0.0, 1.0
		for i := 0; i < df/2; i++ {
			if i > 0 {
				term *= y / float64(i)
			}
			sum += term
		}
		return math.Exp(-y) * sum
	}
	q := math.Erfc(math.Sqrt(y))
	for i := 1; i <= (df-1)/2; i++ {
		lg, _ := math.Lgamma(float64(i) + 0.5)
		q += math.Exp((float64(i)-0.5)*math.Log(y) - y - lg)
	}
	return q
}

// chi2Quantile is the x with chi2Survival(df, x) = p, by bisection.
func chi2Quantile(df int, p float64) float64 {
	lo, hi := 0.0, 1000.0
	for range 200 {
		mid := (lo + hi) / 2
		if chi2Survival(df, mid) > p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// pairInfo is the plug-in mutual information of the members at two stages over the
// flows that have both (nats), the entropies of each, the numbers of distinct
// members and of flows, computed here from stages.arrow's rows.
func pairInfo(stages map[int64]map[uint8]int32, k uint8) (mi, hx, hy float64, rx, ry, n int) {
	joint := map[[2]int32]float64{}
	px, py := map[int32]float64{}, map[int32]float64{}
	for _, m := range stages {
		x, okx := m[k]
		y, oky := m[k+1]
		if !okx || !oky {
			continue
		}
		joint[[2]int32{x, y}]++
		px[x]++
		py[y]++
		n++
	}
	N := float64(n)
	for xy, c := range joint {
		mi += c / N * math.Log(c*N/(px[xy[0]]*py[xy[1]]))
	}
	for _, c := range px {
		hx -= c / N * math.Log(c/N)
	}
	for _, c := range py {
		hy -= c / N * math.Log(c/N)
	}
	return mi, hx, hy, len(px), len(py), n
}

// TestStagesFiveStagePolarization: in a five-stage fabric whose super-spines choose
// among a pod's spines, stages.arrow records the member of every ECMP stage (a leaf
// choosing among 2 spines, stage 1; a spine among 4 super-spines, stage 2; a
// super-spine among the destination pod's 2 spines, stage 3), and the analysis
// measures the polarization between consecutive stages from them. Expectations
// independent of the code, on 4,000 flows of many-flows.pcap (every one between two
// pods):
//   - crc32 (unsalted), and crc32WithSalt with one HashSalt for every switch (the same
//     hash and seed): every switch computes the same h of the flow's key (computed here
//     with hash/crc32 and fmix32), so the members are h mod 2, h mod 4, h mod 2: each
//     stage's choice is a function of the other's in both pairs (h mod 2 = (h mod 4)
//     mod 2), I = min(H), NMI 1 and AMI 1.
//   - crc32WithSalt with per-switch salts (crc32IEEE(name) XOR Seed, the default):
//     the members are computed here from each switch's own salt, and the choices of
//     consecutive stages are independent: 2 N I is chi-square with (r-1)(c-1) degrees
//     of freedom, so I stays below the quantile at 1e-6 over 2 N (computed here), and
//     NMI, AMI below that over min(H).
//
// In every case the analysis's MI, entropies and NMI equal the plug-in values computed
// here from stages.arrow's rows.
func TestStagesFiveStagePolarization(t *testing.T) {
	file := repoPath(t, "testdata/topologies/five-stage-no-planes.yaml")
	const sharedSalt = 0xDEADBEEF
	for _, tc := range []struct {
		name, method string
		salt         *uint32 // nil: per-switch salts
		determined   bool
	}{
		{"crc32", "crc32", nil, true},
		{"crc32WithSalt/shared salt", "crc32WithSalt", ptr(uint32(sharedSalt)), true},
		{"crc32WithSalt/per-switch salts", "crc32WithSalt", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sets := []string{fmt.Sprintf("Topology.File=%q", file), "Switch.EcmpHashMethod=" + tc.method}
			if tc.salt != nil {
				sets = append(sets, fmt.Sprintf("Switch.HashSalt=%d", *tc.salt))
			}
			cfg := parseConfig(t, "", sets...)
			run, out := runTrace(t, "testdata/pcaps/many-flows.pcap", func(o *Options) { o.Config = cfg })
			stages, rows, nodes := readStages(t, out)
			flows := readFlows(t, out)
			if int(run.Records[records.StagesFile]) != len(rows) || len(flows) != 4000 {
				t.Fatalf("%d stage rows (run.json %d), %d flows", len(rows), run.Records[records.StagesFile], len(flows))
			}
			// Every flow crosses pods: three ECMP stages, at a leaf, a spine and a
			// super-spine (names of the five-stage generator).
			prefix := map[uint8]string{1: "leaf-", 2: "spine-", 3: "super-"}
			for _, r := range rows {
				if p := prefix[r.Stage]; p == "" || !strings.HasPrefix(nodes[r.Node], p) {
					t.Fatalf("flow %d stage %d at %s", r.FlowID, r.Stage, nodes[r.Node])
				}
			}
			stageNode := map[int64]map[uint8]string{}
			for _, r := range rows {
				if stageNode[r.FlowID] == nil {
					stageNode[r.FlowID] = map[uint8]string{}
				}
				stageNode[r.FlowID][r.Stage] = nodes[r.Node]
			}
			sizes := map[uint8]uint32{1: 2, 2: 4, 3: 2}
			for i := range flows {
				f := &flows[i]
				m := stages[f.FlowID]
				if len(m) != 3 {
					t.Fatalf("flow %d: stages %v, want 1, 2 and 3", f.FlowID, m)
				}
				if m[1] != f.RackMember || m[2] != f.FabricMember {
					t.Fatalf("flow %d: stages 1, 2 = %d, %d; flows.arrow rack_member %d, fabric_member %d", f.FlowID, m[1], m[2], f.RackMember, f.FabricMember)
				}
				key := ecmpKey(f)
				for k, n := range sizes {
					var h uint32
					switch {
					case tc.method == "crc32":
						h = crc32.ChecksumIEEE(key)
					case tc.salt != nil:
						h = saltedHash(*tc.salt, key)
					default: // docs/model.md#ecmp-hashing: crc32IEEE(name) XOR uint32(Seed)
						h = saltedHash(crc32.ChecksumIEEE([]byte(stageNode[f.FlowID][k]))^uint32(cfg.Seed), key)
					}
					if m[k] != int32(h%n) {
						t.Fatalf("flow %d stage %d at %s: member %d, hash %08x mod %d = %d", f.FlowID, k, stageNode[f.FlowID][k], m[k], h, n, h%n)
					}
				}
			}

			r, err := analysis.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			sp := r.Flows.StagePolarizations(func(n analysis.NodeID) analysis.Role { return r.Roles[n] })
			if len(sp) != 2 || sp[0].From != 1 || sp[1].From != 2 || !sp[1].FromStagesArrow {
				t.Fatalf("stage pairs %+v", sp)
			}
			if got := sp[1].Name(); got != "stage 2 -> 3 (spine -> super-spine)" {
				t.Errorf("pair name %q", got)
			}
			samePolarization(t, sp[0], r.Flows.Polarization())
			for j, p := range sp {
				mi, hx, hy, rx, ry, n := pairInfo(stages, uint8(p.From))
				hmin := math.Min(hx, hy)
				if p.Flows != float64(n) || n != 4000 || !p.Judged || math.Abs(p.MI-mi) > 1e-9 || math.Abs(p.HFrom-hx) > 1e-9 || math.Abs(p.HTo-hy) > 1e-9 ||
					math.Abs(p.NMI-mi/hmin) > 1e-9 {
					t.Errorf("%s: flows %v, MI %v, H %v, %v, NMI %v; computed here: %d flows, MI %v, H %v, %v, NMI %v",
						p.Name(), p.Flows, p.MI, p.HFrom, p.HTo, p.NMI, n, mi, hx, hy, mi/hmin)
				}
				if tc.determined {
					if math.Abs(mi-hmin) > 1e-9 || math.Abs(p.NMI-1) > 1e-9 || math.Abs(p.AMI-1) > 1e-9 {
						t.Errorf("%s: MI %v, min H %v, NMI %v, AMI %v; want one choice a function of the other: NMI 1, AMI 1", p.Name(), mi, hmin, p.NMI, p.AMI)
					}
				} else {
					df := (rx - 1) * (ry - 1)
					bound := chi2Quantile(df, 1e-6) / (2 * float64(n)) // bound on I under independence
					if df != 3 || mi > bound || p.NMI > bound/hmin || math.Abs(p.AMI) > bound/(hmin-bound) {
						t.Errorf("%s: %d x %d members, MI %v, NMI %v, AMI %v; independence bounds MI %v, NMI %v, |AMI| %v",
							p.Name(), rx, ry, mi, p.NMI, p.AMI, bound, bound/hmin, bound/(hmin-bound))
					}
					if j == 1 {
						t.Logf("per-switch salts: stage 2-3 MI %.2e (bound %.2e), NMI %.2e (bound %.2e), AMI %.2e", mi, bound, p.NMI, bound/hmin, p.AMI)
					}
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

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
				// Without stages.arrow the stages are rack_member and fabric_member:
				// one pair, the rack and fabric polarization.
				r, err := analysis.Load(out)
				if err != nil {
					t.Fatal(err)
				}
				sp := r.Flows.StagePolarizations(nil)
				if len(sp) != 1 || sp[0].From != 1 || sp[0].FromStagesArrow {
					t.Fatalf("stage pairs %+v, want 1 -> 2 from flows.arrow", sp)
				}
				samePolarization(t, sp[0], r.Flows.Polarization())
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

// TestStagesExplicitFile: an explicit topology file (testdata/topologies/explicit.yaml)
// writes stages.arrow whatever its sets, its paths need not be up/down. By hand from
// the file: leaf-0's uplink set has 2 members (400G to spine-0, 100G to spine-1:
// WCMP), leaf-1's 4 (2 parallel links to each spine); a spine reaches leaf-1 over a
// set of 2 parallel links and leaf-0 over one link (no ECMP stage). So a flow between
// the leaves has stage 1 at its source leaf (member below 2 or 4, rack_member), and
// stage 2 at a spine exactly when it goes to leaf-1 (member 0 or 1); a flow within a
// leaf has none.
func TestStagesExplicitFile(t *testing.T) {
	file := repoPath(t, "testdata/topologies/explicit.yaml")
	run, out := runTrace(t, "testdata/pcaps/demo.pcap", func(o *Options) {
		o.Config = parseConfig(t, "Switches:\n  shallow: {BufferSize: 16MiB}\n", fmt.Sprintf("Topology.File=%q", file))
		o.Hosts = MapHash // demo.pcap has more endpoints than the file has hosts
	})
	if _, ok := run.Records[records.StagesFile]; !ok {
		t.Fatal("run.json lists no stages.arrow")
	}
	_, rows, nodes := readStages(t, out)
	flows, fnodes := readFlowsNodes(t, out)
	type at struct {
		node   string
		member int32
	}
	by := map[int64]map[uint8]at{}
	for _, r := range rows {
		if by[r.FlowID] == nil {
			by[r.FlowID] = map[uint8]at{}
		}
		by[r.FlowID][r.Stage] = at{nodes[r.Node], r.Member}
	}
	leafOf := func(host string) string { return host[:strings.Index(host, "-h")] }
	upSize := map[string]int32{"leaf-0": 2, "leaf-1": 4}
	between, toLeaf1 := 0, 0
	for i := range flows {
		f := &flows[i]
		src, dst := leafOf(fnodes[f.SrcHost]), leafOf(fnodes[f.DstHost])
		m := by[f.FlowID]
		if src == dst {
			if len(m) != 0 {
				t.Errorf("flow %d within %s has stages %v", f.FlowID, src, m)
			}
			continue
		}
		if f.Delivered == 0 {
			continue // a flow dropped before it left a switch has fewer stages
		}
		between++
		s1, ok1 := m[1]
		if !ok1 || s1.node != src || s1.member < 0 || s1.member >= upSize[src] || s1.member != f.RackMember {
			t.Errorf("flow %d %s -> %s: stage 1 %+v (rack_member %d)", f.FlowID, src, dst, s1, f.RackMember)
		}
		s2, ok2 := m[2]
		if want := dst == "leaf-1"; ok2 != want || ok2 && (!strings.HasPrefix(s2.node, "spine-") || s2.member < 0 || s2.member > 1) || len(m) != 1+btoi(want) {
			t.Errorf("flow %d %s -> %s: stages %v", f.FlowID, src, dst, m)
		}
		if ok2 {
			toLeaf1++
		}
	}
	if between == 0 || toLeaf1 == 0 || toLeaf1 == between {
		t.Fatalf("%d flows between the leaves, %d of them to leaf-1: the trace does not exercise both directions", between, toLeaf1)
	}
	t.Logf("%d flows between the leaves, %d to leaf-1", between, toLeaf1)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// samePolarization checks that stage pair 1 -> 2 measures what the rack and fabric
// polarization does (docs/analysis.md#polarization-between-stages).
func samePolarization(t *testing.T, sp analysis.StagePolarization, p analysis.Polarization) {
	t.Helper()
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	if sp.From != 1 || sp.Flows != p.Flows || sp.Judged != p.Judged || !same(sp.AMI, p.AMI) || !same(sp.NMI, p.NMI) || !same(sp.MI, p.MI) ||
		!same(sp.AMIBySwitch, p.AMIByRack) || sp.Switches != p.Racks || p.Flows < 30 {
		t.Errorf("stage 1 -> 2: flows %v, AMI %v, NMI %v, MI %v, by switch %v over %d; polarization: flows %v, AMI %v, NMI %v, MI %v, by rack %v over %d",
			sp.Flows, sp.AMI, sp.NMI, sp.MI, sp.AMIBySwitch, sp.Switches, p.Flows, p.AMI, p.NMI, p.MI, p.AMIByRack, p.Racks)
	}
}
