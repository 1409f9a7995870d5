package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// TestRulesRejectBadFiles pins docs/model.md#configuration-rules: each rule that stops a simulation rejects a
// file breaking it, with a message naming the attribute (and its line) and the rule.
func TestRulesRejectBadFiles(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want []string // substrings of the error
	}{
		{"over-committed buffer by headroom", "Switch:\n  Headroom: 2MiB\n",
			[]string{"bad.yaml:2: Switch.BufferSize: over-committed buffer: the headroom alone, 41943040 B (20 ports x 1 lossless pools), exceeds BufferSize 32MiB", "rack switches"}},
		{"over-committed buffer by pool bytes", "Switch:\n  Pools:\n    - {Name: lossy, Size: 20MiB, TrafficClasses: [0,1,2,5,6,7]}\n    - {Name: lossless, Size: 12MiB, TrafficClasses: [3,4]}\n",
			[]string{"bad.yaml:2: Switch.BufferSize: over-committed buffer: pools 33554432 B + headroom 4720640 B (20 ports x 1 lossless pools) > BufferSize 32MiB"}},
		{"pool shares above 100%", "Switch:\n  Pools:\n    - {Name: lossy, Size: 60%, TrafficClasses: [0,1,2,5,6,7]}\n    - {Name: lossless, Size: 50%, TrafficClasses: [3,4]}\n",
			[]string{"Switch.Pools: the pools' shares add up to 110%", "over-committed"}},
		{"pool mixing lossless and lossy", "Switch:\n  Pools:\n    - {Name: lossy, Size: 60%, TrafficClasses: [0,1,2,3,5,6,7]}\n    - {Name: lossless, Size: 40%, TrafficClasses: [4]}\n",
			[]string{"bad.yaml:3: Switch.Pools[0].TrafficClasses: pool \"lossy\" mixes lossless TCs [3]", "lossy TCs [0 1 2 5 6 7]"}},
		{"TC in no pool", "Switch:\n  Pools:\n    - {Name: lossy, Size: 60%, TrafficClasses: [0,1,2,5,6]}\n    - {Name: lossless, Size: 40%, TrafficClasses: [3,4]}\n",
			[]string{"Switch.Pools: TCs [7] are in no pool (each TC maps to exactly one pool)"}},
		{"TC in two pools", "Switch:\n  Pools:\n    - {Name: lossy, Size: 60%, TrafficClasses: [0,1,2,5,6,7]}\n    - {Name: lossless, Size: 40%, TrafficClasses: [3,4,7]}\n",
			[]string{"bad.yaml:4: Switch.Pools[1].TrafficClasses: TC 7 is also in pool 0 (each TC maps to exactly one pool)"}},
		{"TC in pool index 8", "Switch:\n  PfcEnabled: []\n  Pools:\n" + strings.Repeat("    - {Name: p, Size: 1%, TrafficClasses: []}\n", 0) + ninePools(),
			[]string{"Switch.Pools[8].TrafficClasses: TC 7 maps to pool index 8 (pool indexes are 0..7)"}},
		{"more than 8 pools", "Switch:\n  PfcEnabled: []\n  Pools:\n" + ninePools(),
			[]string{"Switch.Pools: 9 pools: at most 8"}},
		{"TC outside 0..7", "Switch:\n  PfcEnabled: [3, 4, 8]\n",
			[]string{"bad.yaml:2: Switch.PfcEnabled: TC 8 is not a traffic class"}},
		{"DSCP outside 0..63", "Switch:\n  DscpToTc: {24: 0, 64: 1}\n",
			[]string{"bad.yaml:2: Switch.DscpToTc[64]: DSCP 64 is not a code point (DSCP is 6 bits: 0..63)"}},
		{"DSCP mapped to TC 8", "Switch:\n  DscpToTc:\n    24: 0\n    26: 8\n",
			[]string{"bad.yaml:4: Switch.DscpToTc[26]: TC 8 is not a traffic class (TCs are 0..7)"}},
		{"Xon negative", "Switch:\n  Xon: -1B\n", []string{"bad.yaml:2: Switch.Xon: -1B is negative (Xon must be >= 0)"}},
		{"XonOffset negative", "Switch:\n  XonOffset: -4608\n", []string{"Switch.XonOffset: -4608B is negative (XonOffset must be >= 0)"}},
		{"EcnMinThreshold above EcnMaxThreshold", "Switch:\n  EcnMinThreshold: 2MB\n",
			[]string{"bad.yaml:2: Switch.EcnMinThreshold: EcnMinThreshold 2MB is above EcnMaxThreshold 1600KB"}},
		{"per-class ECN min above max", "Switch:\n  EcnClasses:\n    3: {EcnMaxThreshold: 100KB}\n",
			[]string{"bad.yaml:3: Switch.EcnClasses[3].EcnMinThreshold: EcnMinThreshold 400KB is above EcnMaxThreshold 100KB"}},
		{"probability above 1", "Switch:\n  EcnMaxProbability: 1.5\n", []string{"Switch.EcnMaxProbability: 1.5 is outside [0,1]"}},
		{"probability below 0", "Switch:\n  EcnClasses:\n    4: {EcnMaxProbability: -10%}\n", []string{"Switch.EcnClasses[4].EcnMaxProbability: -0.1 is outside [0,1]"}},
		{"EcnWeight zero", "Switch:\n  EcnWeight: 0\n", []string{"Switch.EcnWeight: 0 is outside (0,1]"}},
		{"EcnWeight above one", "Switch:\n  EcnWeight: 2\n", []string{"Switch.EcnWeight: 2 is outside (0,1]"}},
		{"unknown hash method", "Switch:\n  EcmpHashMethod: md5\n", []string{"bad.yaml:2: Switch.EcmpHashMethod:", "unknown hash method", "crc32WithSalt"}},
		{"unknown load-balancing method", "Switch:\n  LoadBalancingMethod: random\n", []string{"bad.yaml:2: Switch.LoadBalancingMethod:", "unknown load-balancing method"}},
		{"zero speed", "Topology:\n  HostLink: {Speed: 0}\n", []string{"bad.yaml:2: Topology.HostLink.Speed: 0bps must be positive"}},
		{"negative speed", "Topology:\n  FabricSpineLink:\n    Speed: -100G\n", []string{"bad.yaml:3: Topology.FabricSpineLink.Speed: -100Gbps must be positive"}},
		{"speed without a unit", "Topology:\n  HostLink: {Speed: 100}\n", []string{"bad.yaml:2: Topology.HostLink.Speed: 100bps is below 1Mbps (a bare number is bits per second: write a unit, e.g. 100Gbps)"}},
		{"zero cell size", "Switch:\n  CellSize: 0\n", []string{"Switch.CellSize: 0 must be positive"}},
		{"zero buffer size", "Switch:\n  BufferSize: 0\n", []string{"Switch.BufferSize: 0 must be positive"}},
		{"negative propagation delay", "Topology:\n  RackFabricLink: {PropagationDelay: -1us}\n", []string{"Topology.RackFabricLink.PropagationDelay: -1us is negative"}},
		{"negative forwarding latency", "Switch:\n  ForwardingLatency: -5ns\n", []string{"Switch.ForwardingLatency: -5ns is negative"}},
		{"no hosts", "Topology:\n  HostsPerRack: 0\n", []string{"bad.yaml:2: Topology.HostsPerRack: 0 is below 1 (a topology with no hosts"}},
		{"no pods", "Topology:\n  Pods: 0\n", []string{"Topology.Pods: 0 is below 1 (a topology with no hosts"}},
		{"unknown attribute", "Seed: 2\nSwitch:\n  CellSize: 256\n  BufferSze: 16MiB\n",
			[]string{"bad.yaml:4: Switch.BufferSze: unknown attribute (did you mean BufferSize?)"}},
		{"unknown section", "Swtich:\n  BufferSize: 16MiB\n", []string{"bad.yaml:1: Swtich: unknown attribute (did you mean Switch?)"}},
		// The YAML parser reports these tabs one line early; the message names their line.
		{"tab on line 3", "Seed: 1\nSeed2: 2\n\tTopology: {}\n", []string{"bad.yaml:3: YAML syntax: found a tab character"}},
		{"tab on line 4", "Seed: 1\nTopology:\n  Pods: 2\n\tHostsPerRack: 4\n", []string{"bad.yaml:4: YAML syntax: found a tab character"}},
		{"wrong case", "Topology:\n  pods: 3\n", []string{"bad.yaml:2: Topology.pods: unknown attribute (did you mean Pods?)"}},
		{"unknown pool attribute", "Switch:\n  Pools:\n    - {Name: a, Size: 60%, TrafficClass: [0]}\n", []string{"bad.yaml:3: Switch.Pools[0].TrafficClass: unknown attribute (did you mean TrafficClasses?)"}},
		{"Mtu too small", "Switch:\n  Mtu: 20\n", []string{"Switch.Mtu: 20 B is outside 68..65535"}},
		{"Mtu too large", "Switch:\n  Mtu: 64KiB\n", []string{"Switch.Mtu: 65536 B is outside 68..65535"}},
		{"fixed egress mode without a limit", "Switch:\n  EgressLimitMode: fixed\n", []string{"Switch.EgressQueueLimit: EgressLimitMode fixed needs EgressQueueLimit > 0 or EgressQueueLimitBdp > 0"}},
		{"unknown egress mode", "Switch:\n  EgressLimitMode: static\n", []string{"Switch.EgressLimitMode: invalid value: egress limit mode \"static\" is unknown"}},
		{"unknown ECN marking point", "Switch:\n  EcnMarkAt: egress\n", []string{"Switch.EcnMarkAt: invalid value: ECN marking point \"egress\" is unknown (want dequeue, enqueue)"}},
		{"dynamic Xoff with zero alpha", "Switch:\n  XoffAlpha: 0\n", []string{"Switch.XoffAlpha: 0 must be positive when Xoff is 0"}},
		{"bad unit", "Switch:\n  BufferSize: 32 parsecs\n", []string{"bad.yaml:2: Switch.BufferSize: invalid quantity", "unknown unit"}},
		{"not an integer", "Topology:\n  Pods: two\n", []string{"bad.yaml:2: Topology.Pods: \"two\" is not an integer"}},
		{"set twice", "Seed: 1\nSeed: 2\n", []string{"bad.yaml:2: Seed: set twice (first on line 1)"}},
		{"section not a mapping", "Switch: 5\n", []string{"bad.yaml:1: Switch: needs a mapping of attributes"}},
		{"YAML syntax", "Switch:\n  BufferSize: [1\n", []string{"bad.yaml", "YAML syntax"}},
		{"two documents", "Seed: 1\n---\nSeed: 2\n", []string{"one YAML document"}},
		{"duplicate pool names", "Switch:\n  Pools:\n    - {Name: a, Size: 60%, TrafficClasses: [0,1,2,5,6,7]}\n    - {Name: a, Size: 40%, TrafficClasses: [3,4]}\n",
			[]string{"Switch.Pools[1].Name: \"a\" is also pool 0's name"}},
		{"negative fixed headroom", "Switch:\n  Headroom: -1KiB\n", []string{"bad.yaml:2: Switch.Headroom: -1024B must not be negative"}},
		{"too many ports", "Topology:\n  HostsPerRack: 4094\n", []string{"bad.yaml:2: Topology.HostsPerRack: gives rack switches 4098 ports (at most 4096 per switch)"}},
		// 64*64 racks of 256 hosts, 4096 racks, 64*4 fabric and 4*4 spine switches.
		{"too many nodes", "Topology:\n  Pods: 64\n  RacksPerPod: 64\n  HostsPerRack: 256\n", []string{"Topology.HostsPerRack: gives a topology of 1052944 nodes, hosts and switches (at most 1048576)"}},
		{"count too large", "Topology:\n  Pods: 9000000000000000000\n  RacksPerPod: 9000000000000000000\n", []string{"bad.yaml:2: Topology.Pods: 9000000000000000000 is above 4096", "bad.yaml:3: Topology.RacksPerPod"}},
		{"pool without a size", "Switch:\n  Pools:\n    - {Name: lossy, TrafficClasses: [0,1,2,5,6,7]}\n    - {Name: lossless, Size: 40%, TrafficClasses: [3,4]}\n",
			[]string{"bad.yaml:3: Switch.Pools[0].Size: 0: a pool with traffic classes needs space"}},
		{"ECN class key twice", "Switch:\n  EcnClasses:\n    3: {EcnMaxProbability: 0.1}\n    03: {EcnMaxProbability: 0.2}\n", []string{"bad.yaml:4: Switch.EcnClasses[03]: set twice"}},
		{"flow table too big", "Switch:\n  Flowlet: {FlowTableSize: -1}\n", []string{"Switch.Flowlet.FlowTableSize: -1 is outside 0..16777216"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, _, err := Parse([]byte(c.yaml), "bad.yaml", nil)
			if err == nil {
				t.Fatalf("accepted:\n%s", c.yaml)
			}
			if cfg != nil {
				t.Errorf("returned a config with the error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			var e *Error
			if !errors.As(err, &e) || len(e.Violations) == 0 {
				t.Fatalf("error is not an *Error with violations: %v", err)
			}
			msg := err.Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q\n  lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

// ninePools is a pool list with nine lossy pools; TC 7 lands in pool index 8.
func ninePools() string {
	var b strings.Builder
	tcs := []string{"[0]", "[1]", "[2]", "[3]", "[4]", "[5]", "[6]", "[]", "[7]"}
	for i, tc := range tcs {
		b.WriteString("    - {Name: p" + string(rune('0'+i)) + ", Size: 10%, TrafficClasses: " + tc + "}\n")
	}
	return b.String()
}

func TestAllViolationsReported(t *testing.T) {
	bad := "Switch:\n  Xon: -1\n  EcnWeight: 0\nTopology:\n  HostsPerRack: 0\n  HostLink: {Speed: 0}\n"
	_, _, err := Parse([]byte(bad), "bad.yaml", nil)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v", err)
	}
	var attrs []string
	for _, v := range e.Violations {
		attrs = append(attrs, v.Attr)
	}
	want := []string{"Switch.Xon", "Switch.EcnWeight", "Topology.HostsPerRack", "Topology.HostLink.Speed"}
	if !reflect.DeepEqual(attrs, want) {
		t.Fatalf("violations on %v, want %v (in line order)", attrs, want)
	}
	if e.Violations[0].Line != 2 || e.Violations[3].Line != 6 || e.Violations[0].Source != "bad.yaml" {
		t.Fatalf("locations: %+v", e.Violations)
	}
}

// The over-commit rule is reported with unrelated violations too.
func TestOvercommitWithOtherViolations(t *testing.T) {
	_, _, err := Parse([]byte("Switch:\n  EcnWeight: 0\n  Headroom: 2MiB\n"), "bad.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:2: Switch.EcnWeight") || !strings.Contains(err.Error(), "bad.yaml:3: Switch.BufferSize: over-committed buffer") {
		t.Fatalf("err = %v", err)
	}
}

func TestPartialFileKeepsDefaults(t *testing.T) {
	c, warns, err := Parse([]byte("Seed: 42\nSwitch:\n  BufferSize: 16MiB\n  EcnMaxProbability: 10%\nTopology:\n  HostLink:\n    Speed: 25G\n"), "f.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Seed = 42
	want.Switch.BufferSize = 16 * units.MiB
	want.Switch.EcnMaxProbability = 0.1
	want.Topology.HostLink.Speed = 25 * units.Gbps
	if !reflect.DeepEqual(*c, want) {
		t.Fatalf("got %+v\nwant %+v", *c, want)
	}
	if len(warns) != 0 {
		t.Fatalf("warnings %v", warns)
	}
}

func TestEmptyAndMissing(t *testing.T) {
	for _, data := range []string{"", "\n# nothing\n", "---\n", "Switch:\nTopology:\n"} {
		c, _, err := Parse([]byte(data), "e.yaml", nil)
		if err != nil || !reflect.DeepEqual(*c, Default()) {
			t.Errorf("%q: %v", data, err)
		}
	}
	_, _, err := Load(filepath.Join(t.TempDir(), "missing.yaml"), nil)
	if err == nil || !strings.Contains(err.Error(), "missing.yaml") || !errors.Is(err, ErrInvalid) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestSet(t *testing.T) {
	cases := []struct {
		set   string
		check func(c *Config) bool
	}{
		{"Switch.BufferSize=16MiB", func(c *Config) bool { return c.Switch.BufferSize == 16*units.MiB }},
		{"BufferSize=48MiB", func(c *Config) bool { return c.Switch.BufferSize == 48*units.MiB }},
		{"Pods=1", func(c *Config) bool { return c.Topology.Pods == 1 }},
		{"Seed=9", func(c *Config) bool { return c.Seed == 9 }},
		{"Topology.HostLink.Speed=25G", func(c *Config) bool { return c.Topology.HostLink.Speed == 25*units.Gbps }},
		{"HostLink.Speed=400Gbps", func(c *Config) bool { return c.Topology.HostLink.Speed == 400*units.Gbps }},
		{"HostLink={Speed: 10G, PropagationDelay: 2us}", func(c *Config) bool {
			return c.Topology.HostLink == Link{10 * units.Gbps, 2 * units.Microsecond}
		}},
		{"Gap=50us", func(c *Config) bool { return c.Switch.Flowlet.Gap == 50*units.Microsecond }},
		{"Headroom=300KB", func(c *Config) bool { return c.Switch.Headroom == FixedHeadroom(300*units.KB) }},
		{"EcmpHashMethod=toeplitz", func(c *Config) bool { return c.Switch.EcmpHashMethod == ecmp.Toeplitz }},
		{"LoadBalancingMethod=flowlet", func(c *Config) bool { return c.Switch.LoadBalancingMethod == ecmp.Flowlet }},
		{"EgressLimitMode=fixed", func(c *Config) bool { return c.Switch.EgressLimitMode == EgressFixed }},
		{"EcnMarkAt=enqueue", func(c *Config) bool { return c.Switch.EcnMarkAt == EcnAtEnqueue }},
		{"EcnEnabled=3,4", func(c *Config) bool { return reflect.DeepEqual(c.Switch.EcnEnabled, []int{3, 4}) }},
		{"EcnEnabled=[0, 1]", func(c *Config) bool { return reflect.DeepEqual(c.Switch.EcnEnabled, []int{0, 1}) }},
		{"EcnEnabled=", func(c *Config) bool { return c.Switch.EcnEnabled == nil }},
		{"EcnMinThreshold=100KB", func(c *Config) bool { return c.Switch.EcnMinThreshold == 100*units.KB && c.Switch.EcnClasses == nil }},
		{"Switch.Pools[1].Size=35%", func(c *Config) bool { return c.Switch.Pools[1].Size == PoolShare(0.35) }},
		{"Pools[0].Size=8MiB", func(c *Config) bool { return c.Switch.Pools[0].Size == PoolBytes(8*units.MiB) }},
		{"Pools[0].Name=best-effort", func(c *Config) bool { return c.Switch.Pools[0].Name == "best-effort" }},
		{"EcnClasses[3].EcnMaxProbability=0.5", func(c *Config) bool {
			p := c.Switch.EcnClasses[3].EcnMaxProbability
			return p != nil && *p == 0.5 && c.Switch.Ecn(3).MaxProbability == 0.5 && c.Switch.Ecn(4).MaxProbability == 0.2
		}},
		{"DscpToTc={24: 0, 46: 5}", func(c *Config) bool {
			m := c.Switch.ClassMap()
			return reflect.DeepEqual(c.Switch.DscpToTc, map[int]int{24: 0, 46: 5}) && m[24] == 0 && m[25] == 3 && m[46] == 5 && m[8] == 1
		}},
		{"DscpToTc[24]=0", func(c *Config) bool { return reflect.DeepEqual(c.Switch.DscpToTc, map[int]int{24: 0}) }},
		{"DscpToTc=", func(c *Config) bool { return c.Switch.DscpToTc == nil && c.Switch.ClassMap() == DefaultClassMap() }},
		{"HashSalt=0xdeadbeef", func(c *Config) bool { return c.Switch.HashSalt != nil && *c.Switch.HashSalt == 0xdeadbeef }},
		{"Flowlet.PreferUnpaused=false", func(c *Config) bool { return !c.Switch.Flowlet.PreferUnpaused }},
		{"XoffAlpha=1/8", nil}, // not a number: error
	}
	for _, tc := range cases {
		t.Run(tc.set, func(t *testing.T) {
			c := Default()
			err := c.Set(tc.set)
			if tc.check == nil {
				if err == nil {
					t.Fatalf("accepted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(&c) {
				t.Fatalf("not applied: %+v", c.Switch)
			}
		})
	}
}

func TestSetErrors(t *testing.T) {
	cases := []struct{ set, want string }{
		{"Speed=25G", "--set: Speed: ambiguous attribute: it names Topology.HostLink.Speed, Topology.RackFabricLink.Speed, Topology.FabricSpineLink.Speed, Events.Speed; qualify it"},
		{"PropagationDelay=2us", "ambiguous attribute"},
		{"Bogus=1", "--set: Bogus: unknown attribute"},
		{"Foo=1", "--set: Foo: unknown attribute (replay config --defaults prints every attribute)"}, // not "did you mean Xon?"
		{"Xonn=1", "--set: Xonn: unknown attribute (did you mean Xon?)"},
		{"BufferSise=1MiB", "--set: BufferSise: unknown attribute (did you mean BufferSize?)"},
		{"Topology.Pod=1", "--set: Topology.Pod: unknown attribute (did you mean Topology.Pods?)"},
		{"Switch.Flowlet.Gapp=1us", "--set: Switch.Flowlet.Gapp: unknown attribute (did you mean Switch.Flowlet.Gap?)"},
		{"Switch.Bogus=1", "unknown attribute"},
		{"BufferSize", "want Attr=Value"},
		{"=3", "want Attr=Value"},
		{"Pools[5].Size=10%", "Switch.Pools[5]: no such element (the list has 2: indexes 0..1)"},
		{"Pools.Size=10%", "Switch.Pools: is a list or map: name an element, e.g. Switch.Pools[0].Size"},
		{"Size=10%", "is a list or map"},
		{"Pods=lots", "--set: Topology.Pods: \"lots\" is not an integer"},
		{"BufferSize=lots", "--set: Switch.BufferSize: invalid quantity"},
		{"Pods[1]=2", "is not a list or map"},
		{"EcnClasses[x].EcnWeight=1", "unknown attribute"},
		{"EcnClasses[x].EcnMaxProbability=1", "\"x\" is not an integer"},
		{"Switch=3", "needs a mapping"},
	}
	for _, tc := range cases {
		t.Run(tc.set, func(t *testing.T) {
			c := Default()
			err := c.Set(tc.set)
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Set(%q) = %v, want an ErrInvalid containing %q", tc.set, err, tc.want)
			}
		})
	}
}

// TestSetOverridesFileAndValidates: --set applies after the file, then validation runs
// and names the --set as the source.
func TestSetOverridesFileAndValidates(t *testing.T) {
	file := "Switch:\n  BufferSize: 16MiB\n"
	c, _, err := Parse([]byte(file), "f.yaml", []string{"BufferSize=24MiB", "Pods=3"})
	if err != nil || c.Switch.BufferSize != 24*units.MiB || c.Topology.Pods != 3 {
		t.Fatalf("%v %+v", err, c)
	}
	_, _, err = Parse([]byte(file), "f.yaml", []string{"EcnWeight=0"})
	if err == nil || err.Error() != "--set: Switch.EcnWeight: 0 is outside (0,1] (EWMA weight: 1 = instantaneous)" {
		t.Fatalf("err = %v", err)
	}
	_, _, err = Parse([]byte(file), "f.yaml", []string{"Speed=1G"})
	if err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("err = %v", err)
	}
}

func TestRoundTripDefault(t *testing.T) {
	def := Default()
	out, err := def.YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"BufferSize: 32MiB", "Size: 60%", "Headroom: auto", "EcnMinThreshold: 400KB", "Mtu: 9000B", "EcmpHashMethod: crc32WithSalt", "HashSalt: null", "Speed: 100Gbps", "PropagationDelay: 1us", "EgressLimitMode: dynamic", "Gap: 100us", "Xoff: 0 #", "HashSalt: null #"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("default YAML lacks %q:\n%s", want, out)
		}
	}
	path := filepath.Join(t.TempDir(), "default.yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	back, warns, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*back, def) {
		t.Fatalf("round trip differs:\n%+v\n%+v", *back, def)
	}
	if len(warns) != 0 {
		t.Fatalf("defaults warn: %v", warns)
	}
	again, _ := back.YAML()
	if string(again) != string(out) {
		t.Fatalf("second print differs")
	}
}

func TestRoundTripCustom(t *testing.T) {
	c := Default()
	salt := uint32(0xdeadbeef)
	p := 0.05
	lo, hi := 10*units.KB, 20*units.KB
	c.Seed = -7
	c.Switch.HashSalt = &salt
	c.Switch.Headroom = FixedHeadroom(300 * units.KB)
	c.Switch.Pools = []Pool{
		{Name: "bulk", Size: PoolBytes(12 * units.MiB), TrafficClasses: []int{0, 1, 2, 5, 6, 7}},
		{Name: "rdma", Size: PoolShare(0.07), TrafficClasses: []int{3, 4}},
	}
	c.Switch.EcnClasses = map[int]EcnOverride{3: {EcnMinThreshold: &lo, EcnMaxThreshold: &hi}, 5: {EcnMaxProbability: &p}}
	c.Switch.EcnEnabled = nil
	c.Switch.EgressLimitMode = EgressFixed
	c.Switch.EgressQueueLimitBdp = 1.5
	c.Switch.EcmpHashMethod = ecmp.XOR16
	c.Switch.LoadBalancingMethod = ecmp.Flowlet
	c.Switch.Flowlet = Flowlet{Gap: 2500 * units.Nanosecond, FlowTableSize: 4096, PreferUnpaused: false}
	c.Switch.XoffAlpha = 1.0 / 3
	c.Switch.SwitchingCapacity = 1600 * units.Gbps
	c.Topology.FabricSpineLink = Link{Speed: 400 * units.Gbps, PropagationDelay: 1234567}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := Parse(out, "custom.yaml", nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"HashSalt: 0xdeadbeef #", "Size: 12MiB\n", "Size: 7%\n", "3:\n      EcnMinThreshold: 10KB\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("YAML lacks %q:\n%s", want, out)
		}
	}
	if !reflect.DeepEqual(*back, c) {
		t.Fatalf("round trip differs:\n%s\n%+v\n%+v", out, back.Switch, c.Switch)
	}
}

func TestWarnings(t *testing.T) {
	_, warns, err := Parse([]byte("Switch:\n  Headroom: 100KiB\n"), "w.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "rack, fabric, spine switches: Switch.Headroom 100KiB (102400 B) is below the 236032 B that a 100Gbps port with 1us links needs") {
		t.Errorf("headroom warnings %q", warns)
	}
	// 25G host ports need 117,760 B (rack switches only), 100G ports 236,032 B (all).
	_, warns, _ = Parse(nil, "", []string{"Headroom=80KiB", "HostLink.Speed=25G"})
	if len(warns) != 2 || !strings.HasPrefix(warns[0], "rack switches: Switch.Headroom 80KiB (81920 B) is below the 117760 B that a 25Gbps port") ||
		!strings.HasPrefix(warns[1], "rack, fabric, spine switches: Switch.Headroom 80KiB (81920 B) is below the 236032 B that a 100Gbps port") {
		t.Errorf("headroom warnings with 25G hosts %q", warns)
	}
	_, warns, _ = Parse(nil, "", []string{"HashSalt=5"})
	if len(warns) != 1 || !strings.Contains(warns[0], "Switch.HashSalt 0x5: every switch uses the same salt") {
		t.Errorf("HashSalt warnings %q", warns)
	}
	_, warns, _ = Parse(nil, "", []string{"SwitchingCapacity=1Tbps"})
	if len(warns) != 1 || warns[0] != "rack switches: Switch.SwitchingCapacity 1Tbps is below their bandwidth 2Tbps (20 ports): oversubscribed 2:1 (reported only; forwarding is not limited)" {
		t.Errorf("capacity warnings %q", warns)
	}
	_, warns, _ = Parse(nil, "", []string{"Xoff=12MiB"})
	if len(warns) != 1 || !strings.Contains(warns[0], `rack switches: Switch.Xoff 12MiB is not below lossless pool "lossless"'s size 11533312 B`) {
		t.Errorf("Xoff warnings %q", warns)
	}
	_, warns, _ = Parse(nil, "", []string{"EgressQueueLimit=1MB"})
	if len(warns) != 1 || !strings.Contains(warns[0], "ignored with EgressLimitMode dynamic") {
		t.Errorf("egress warnings %q", warns)
	}
}

func TestComponentSeed(t *testing.T) {
	c := Default()
	a, b := c.Rand("rack-p0-r0/ecn"), c.Rand("rack-p0-r0/ecn")
	x := c.Rand("rack-p0-r1/ecn")
	same, differ := true, false
	for i := 0; i < 16; i++ {
		u, v, w := a.Uint64(), b.Uint64(), x.Uint64()
		same = same && u == v
		differ = differ || u != w
	}
	if !same || !differ {
		t.Fatalf("same name same stream %v, different names differ %v", same, differ)
	}
	s1, s2 := ComponentSeed(1, "abc")
	if s1 != 1 || s2 != 0x352441c2 { // crc32IEEE("abc")
		t.Fatalf("ComponentSeed(1, abc) = %#x, %#x", s1, s2)
	}
}

func TestECMPConfig(t *testing.T) {
	c := Default()
	e := c.ECMP("rack-p0-r1")
	if e.Method != ecmp.CRC32WithSalt || e.Salt != ecmp.DefaultSalt("rack-p0-r1", 1) || e.LoadBalancing != ecmp.None ||
		e.Gap != 100*units.Microsecond || e.FlowTableSize != 0 || !e.PreferUnpaused {
		t.Fatalf("%+v", e)
	}
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	salt := uint32(7)
	c.Switch.HashSalt = &salt
	if c.ECMP("x").Salt != 7 {
		t.Fatal("configured salt ignored")
	}
}

func TestEgressQueueLimitBytes(t *testing.T) {
	c := Default()
	if c.EgressQueueLimitBytes() != 0 {
		t.Fatal("dynamic mode has a fixed limit")
	}
	c.Switch.EgressLimitMode = EgressFixed
	c.Switch.EgressQueueLimit = 500 * units.KB
	if c.EgressQueueLimitBytes() != 500*units.KB {
		t.Fatal("fixed bytes")
	}
	c.Switch.EgressQueueLimitBdp = 2.5 // 2.5 x 204,732 = 511,830
	if got := c.EgressQueueLimitBytes(); got != 511830 {
		t.Fatalf("2.5 BDP = %d, want 511,830", got)
	}
}

func TestPoolSizeParse(t *testing.T) {
	cases := []struct {
		in   string
		want PoolSize
		err  bool
	}{
		{"60%", PoolShare(0.6), false}, {"0.4", PoolShare(0.4), false}, {"12MiB", PoolBytes(12 * units.MiB), false},
		{"9000", PoolBytes(9000), false}, {"lots", PoolSize{}, true}, {"2.5", PoolSize{}, true}, {"x%", PoolSize{}, true},
	}
	for _, c := range cases {
		got, err := ParsePoolSize(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParsePoolSize(%q) = %v, %v", c.in, got, err)
		}
	}
	if h, err := ParseHeadroom("auto"); err != nil || !h.Auto {
		t.Errorf("auto: %v %v", h, err)
	}
	if _, err := ParseHeadroom("big"); err == nil {
		t.Error("headroom big accepted")
	}
}

func FuzzParse(f *testing.F) {
	def, _ := func() ([]byte, error) { c := Default(); return c.YAML() }()
	f.Add(def)
	f.Add([]byte("Switch:\n  Pools:\n    - {Name: a, Size: 60%, TrafficClasses: [0]}\n"))
	f.Add([]byte("Switch:\n  EcnClasses:\n    3: {EcnMaxThreshold: 1KB}\n"))
	f.Add([]byte("a: &x [1]\nb: *x\n"))
	f.Add([]byte("Topology: {Pods: 0, HostLink: {Speed: -1}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, _, err := Parse(data, "fuzz.yaml", nil)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		// Anything accepted prints and reloads to the same configuration.
		out, err := c.YAML()
		if err != nil {
			t.Fatal(err)
		}
		back, _, err := Parse(out, "again.yaml", nil)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("accepted config does not round-trip: %v\n%s", err, out)
		}
	})
}

// TestJSON: run.json embeds the effective configuration with the same names and
// spellings as the YAML.
func TestJSON(t *testing.T) {
	c := Default()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"BufferSize":"32MiB"`, `"Size":"60%"`, `"Headroom":"auto"`, `"EcmpHashMethod":"crc32WithSalt"`, `"HashSalt":null`, `"Speed":"100Gbps"`, `"EgressLimitMode":"dynamic"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
}

// TestClassMap pins docs/model.md#classification: TC = DSCP / 8 for every code point
// a map does not list, the listed ones as the map says; all violations of a map at
// once, one per entry.
func TestClassMap(t *testing.T) {
	def := DefaultClassMap()
	for d, want := range []uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1} {
		if def[d] != want {
			t.Errorf("default: DSCP %d -> TC %d, want %d", d, def[d], want)
		}
	}
	for _, c := range []struct{ dscp, tc uint8 }{{24, 3}, {26, 3}, {46, 5}, {48, 6}, {63, 7}, {64 + 24, 3}} {
		if got := def.TC(c.dscp); got != c.tc {
			t.Errorf("default: DSCP %d -> TC %d, want %d", c.dscp, got, c.tc)
		}
	}
	s := Default().Switch
	s.DscpToTc = map[int]int{24: 0, 46: 7, 0: 2}
	m := s.ClassMap()
	for d := 0; d < NumDSCP; d++ {
		want := uint8(d / 8)
		switch d {
		case 24:
			want = 0
		case 46:
			want = 7
		case 0:
			want = 2
		}
		if m[d] != want {
			t.Errorf("{24: 0, 46: 7, 0: 2}: DSCP %d -> TC %d, want %d", d, m[d], want)
		}
	}
	_, _, err := Parse([]byte("Switch:\n  DscpToTc: {-1: 0, 10: -2, 70: 9, 12: 3}\n"), "m.yaml", nil)
	var e *Error
	if !errors.As(err, &e) || len(e.Violations) != 3 {
		t.Fatalf("err = %v, want 3 violations", err)
	}
	want := []string{
		"m.yaml:2: Switch.DscpToTc[-1]: DSCP -1 is not a code point (DSCP is 6 bits: 0..63)",
		"m.yaml:2: Switch.DscpToTc[10]: TC -2 is not a traffic class (TCs are 0..7)",
		"m.yaml:2: Switch.DscpToTc[70]: DSCP 70 is not a code point (DSCP is 6 bits: 0..63)",
	}
	for i, v := range e.Violations {
		if v.String() != want[i] {
			t.Errorf("violation %d: %q, want %q", i, v.String(), want[i])
		}
	}
}

// A transport mode that names a closed-loop sender says where it belongs.
func TestWantTransportMode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"dctcp", "want open or closed; dctcp is a closed-loop TCP sender, chosen by Transport.Tcp: --transport closed --set Transport.Tcp=dctcp"},
		{"NewReno", "want open or closed; newreno is a closed-loop TCP sender, chosen by Transport.Tcp: --transport closed --set Transport.Tcp=newreno"},
		{"dcqcn", "want open or closed; dcqcn is the closed-loop RoCEv2 sender (Transport.Roce, the default): --transport closed"},
		{"auto", "want open or closed; auto is Transport.Tcp's default closed-loop TCP sender (DCTCP when ECN-capable, else NewReno): --transport closed"},
		{"tcp", "want open or closed"},
	} {
		if got := WantTransportMode(c.in); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMinBufferSize: the smallest BufferSize that fits, worked out by hand from the
// layout rule (docs/model.md#shared-buffer), and the over-committed message says it.
func TestMinBufferSize(t *testing.T) {
	// Default rack: 20 ports x 236,032 B of auto headroom = 4,720,640 B; the 40%
	// pool needs floor(0.4 x left) >= 256 B, so left >= 640 B, where the 60% pool gets
	// floor(384 / 256) cells = 256 B and 256 + 256 <= 640.
	def := Default()
	if got, ok := def.MinBufferSize(); !ok || got != 4_720_640+640 {
		t.Errorf("default: %d, %v; want 4721280", got, ok)
	}
	if got, ok := def.Switch.MinBufferSize(def.Ports(TierFabric)); !ok || got != 8*236_032+640 {
		t.Errorf("fabric: %d, %v; want %d", got, ok, 8*236_032+640)
	}
	// Pools in bytes: the headroom plus the pools, 4,720,640 + 20 MiB + 12 MiB.
	byBytes := Default()
	byBytes.Switch.Pools[0].Size, byBytes.Switch.Pools[1].Size = PoolBytes(20*units.MiB), PoolBytes(12*units.MiB)
	if got, ok := byBytes.MinBufferSize(); !ok || got != 4_720_640+32*units.MiB {
		t.Errorf("pools in bytes: %d, %v; want %d", got, ok, 4_720_640+32*units.MiB)
	}
	// A share beside bytes, 50% and 1 MiB: left must hold 1 MiB plus 0.5 x left
	// rounded down to whole cells. At left = 2 MiB - 256 the share is 1 MiB - 128,
	// rounded down to 1 MiB - 256: 2 MiB - 256 in all, which fits; one byte less and
	// the share still rounds to 1 MiB - 256, which does not.
	mixed := Default()
	mixed.Switch.Pools[0].Size = PoolShare(0.5)
	mixed.Switch.Pools[1].Size = PoolBytes(units.MiB)
	if got, ok := mixed.MinBufferSize(); !ok || got != 4_720_640+2*units.MiB-256 {
		t.Errorf("50%% and 1 MiB: %d, %v; want %d", got, ok, 4_720_640+2*units.MiB-256)
	}
	// 100% of shares beside a pool in bytes: nothing fits.
	full := Default()
	full.Switch.Pools[0].Size = PoolShare(1)
	full.Switch.Pools[1].Size = PoolBytes(units.MiB)
	if got, ok := full.MinBufferSize(); ok {
		t.Errorf("100%% and 1 MiB: %d fits", got)
	}
	_, _, err := Parse(nil, "", []string{"BufferSize=1MiB"})
	want := "--set: Switch.BufferSize: over-committed buffer: the headroom alone, 4720640 B (20 ports x 1 lossless pools), exceeds BufferSize 1MiB (1048576 B); " +
		"the pools and all headroom must fit in the buffer (on rack and fabric switches); the smallest BufferSize that fits every switch, with at least one cell in each pool, is 4721280 B (5MiB rounds it up to whole MiB)"
	if err == nil || err.Error() != want {
		t.Errorf("BufferSize=1MiB:\n got %v\nwant %s", err, want)
	}
	if _, _, err := Parse(nil, "", []string{"BufferSize=4721280B"}); err != nil {
		t.Errorf("the smallest BufferSize said to fit does not: %v", err)
	}
}
