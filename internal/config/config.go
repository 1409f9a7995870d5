package config

import (
	"hash/crc32"
	"math/rand/v2"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// NumTC is the number of traffic classes (docs/model.md#classification).
const NumTC = 8

// NumDSCP is the number of DSCP code points (6 bits).
const NumDSCP = 64

// ClassMap is the classification of a switch or host NIC: the traffic class of each
// DSCP code point (docs/model.md#classification). Switch.ClassMap builds it.
type ClassMap [NumDSCP]uint8

// DefaultClassMap is TC = DSCP / 8 (DSCP >> 3) for every code point.
func DefaultClassMap() ClassMap {
	var m ClassMap
	for d := range m {
		m[d] = uint8(d >> 3)
	}
	return m
}

// TC returns the traffic class of dscp (its 6 low bits).
func (m *ClassMap) TC(dscp uint8) uint8 { return m[dscp&(NumDSCP-1)] }

// ClassMap returns the switch's classification: DscpToTc over DefaultClassMap.
// Entries Validate rejects (a DSCP outside 0..63, a TC outside 0..7) are left out.
func (s *Switch) ClassMap() ClassMap {
	m := DefaultClassMap()
	for d, tc := range s.DscpToTc {
		if d >= 0 && d < NumDSCP && tc >= 0 && tc < NumTC {
			m[d] = uint8(tc)
		}
	}
	return m
}

// MaxPools is the largest number of buffer pools a switch has (docs/model.md#shared-buffer).
const MaxPools = 8

// PfcFrameWireBytes is the wire size of a PFC frame: a 64-byte frame plus 20 bytes of
// preamble, SFD and inter-frame gap (docs/model.md#units-and-conventions).
const PfcFrameWireBytes units.Bytes = 84

// Config is the configuration of one tracefabric run: the whole YAML file.
// Start from Default (or Load, which decodes onto Default); the zero Config is not
// valid.
type Config struct {
	// Seed is the run's random seed (default 1). Every component that draws random
	// numbers owns a PCG generator seeded from it by ComponentSeed.
	Seed int64 `yaml:"Seed"`
	// Switch holds the attributes of every switch (Rack, Fabric and Spine alike)
	// that no profile of Switches applies to.
	Switch Switch `yaml:"Switch"`
	// Switches are named switch profiles (docs/topology.md#profiles): each the full
	// Switch attribute set, inheriting every attribute it does not set from Switch.
	// A profile named after a role (rack, fabric, spine; a topology file's leaf,
	// super-spine, ...) applies to that role's switches; a topology file assigns
	// profiles per role, group or node. Default: none.
	Switches map[string]Switch `yaml:"Switches,omitempty"`
	// Topology is the Clos fabric (docs/model.md#clos-builder).
	Topology Topology `yaml:"Topology"`
	// Transport configures closed-loop replay (docs/model.md#closed-loop-transports).
	Transport Transport `yaml:"Transport"`
}

// Switch holds the attributes of the switch model (docs/model.md#switch-model), shared by every switch of
// the fabric. Sizes are bytes, times picoseconds, speeds bits per second; YAML spells
// them in human units ("32MiB", "1us", "100Gbps").
type Switch struct {
	// BufferSize is the switch-wide shared packet buffer (default 32 MiB). Must be > 0.
	BufferSize units.Bytes `yaml:"BufferSize"`
	// CellSize is the buffer's accounting unit (default 256 B): a frame of F bytes
	// occupies ceil(F/CellSize) cells. Must be > 0 and <= BufferSize.
	CellSize units.Bytes `yaml:"CellSize"`
	// DscpToTc maps DSCP code points (0..63) to traffic classes (0..7) where they do
	// not follow the default TC = DSCP / 8 (docs/model.md#classification), as an
	// operator's DSCP-to-TC map does: {24: 0} puts CS3 in the lossy TC 0. A code point
	// it does not list keeps DSCP / 8. Default: none. Switch.ClassMap resolves it.
	DscpToTc map[int]int `yaml:"DscpToTc"`
	// Pools divide the buffer (at most MaxPools). Each TC maps to exactly one pool; the
	// pool's index in this list is its pool number. Default: pool 0 "lossy" 60% with
	// TCs 0,1,2,5,6,7 and pool 1 "lossless" 40% with TCs 3,4.
	Pools []Pool `yaml:"Pools"`
	// PfcEnabled lists the TCs with PFC (default [3, 4]). A pool is lossless if its TCs
	// have PFC, lossy if none has; a pool mixing both is a configuration error.
	// Empty: no PFC, every pool lossy.
	PfcEnabled []int `yaml:"PfcEnabled"`
	// Headroom is the buffer each (port, lossless pool) owns outside the pools:
	// "auto" (default) sizes it per port from the port speed and link delay by
	// docs/model.md#headroom-sizing (AutoHeadroom); a size in bytes fixes it for every port ("0" = none;
	// a size below the formula draws a warning).
	Headroom Headroom `yaml:"Headroom"`
	// XoffAlpha is the dynamic Xoff factor (default 0.125): XoffThreshold =
	// XoffAlpha * (PoolSize - PoolShared). Used when Xoff is 0; must then be > 0.
	XoffAlpha float64 `yaml:"XoffAlpha"`
	// Xoff is a fixed Xoff threshold in bytes of a (port, pool)'s shared occupancy.
	// 0 (default) = dynamic (XoffAlpha).
	Xoff units.Bytes `yaml:"Xoff"`
	// Xon is the floor of the resume threshold (default 4608 B):
	// XonThreshold = max(Xon, XoffThreshold - XonOffset). Must be >= 0.
	Xon units.Bytes `yaml:"Xon"`
	// XonOffset is the hysteresis below Xoff at which a port resumes (default 4608 B).
	// Must be >= 0.
	XonOffset units.Bytes `yaml:"XonOffset"`
	// EgressLimitMode selects the lossy egress queue limit: dynamic (default,
	// limit = EgressAlpha * (PoolSize - PoolUsed)) or fixed (EgressQueueLimitBdp or
	// EgressQueueLimit).
	EgressLimitMode EgressLimitMode `yaml:"EgressLimitMode"`
	// EgressAlpha is the dynamic egress limit factor (default 8). Must be > 0 in
	// dynamic mode.
	EgressAlpha float64 `yaml:"EgressAlpha"`
	// EgressQueueLimit is the fixed egress queue limit in bytes (fixed mode; default 0).
	// Ignored when EgressQueueLimitBdp > 0.
	EgressQueueLimit units.Bytes `yaml:"EgressQueueLimit"`
	// EgressQueueLimitBdp is the fixed egress queue limit as a multiple of the fabric
	// BDP (docs/model.md#fabric-bdp), fixed mode only; when > 0 it takes precedence over
	// EgressQueueLimit. Default 0 (unused). Config.EgressQueueLimitBytes resolves both.
	EgressQueueLimitBdp float64 `yaml:"EgressQueueLimitBdp"`
	// EcnEnabled lists the TCs whose packets may be ECN-marked (default all, 0..7).
	EcnEnabled []int `yaml:"EcnEnabled"`
	// EcnMinThreshold is the averaged queue occupancy below which nothing is marked
	// (default 400 KB = 400,000 B).
	EcnMinThreshold units.Bytes `yaml:"EcnMinThreshold"`
	// EcnMaxThreshold is the averaged occupancy at and above which every ECN-capable
	// packet is marked (default 1600 KB). Must be >= EcnMinThreshold (equal = step).
	EcnMaxThreshold units.Bytes `yaml:"EcnMaxThreshold"`
	// EcnMaxProbability is the marking probability just below EcnMaxThreshold
	// (default 0.2), in [0,1]; YAML also accepts "20%".
	EcnMaxProbability float64 `yaml:"EcnMaxProbability"`
	// EcnWeight is the EWMA weight w of avg = (1-w)*avg + w*q (default 1.0:
	// instantaneous), in (0,1].
	EcnWeight float64 `yaml:"EcnWeight"`
	// EcnMarkAt is where the marker evaluates the queue: dequeue (default: when a
	// packet starts transmitting, on the queue it leaves behind) or enqueue (when it is
	// admitted, on the queue including it, as ns-3's RED in inet-tub/ns3-datacenter).
	EcnMarkAt EcnMarkAt `yaml:"EcnMarkAt"`
	// EcnClasses optionally overrides the three ECN numbers per TC (key 0..7); an
	// omitted number keeps the switch-wide value. Default: none. Switch.Ecn resolves.
	EcnClasses map[int]EcnOverride `yaml:"EcnClasses,omitempty"`
	// Mtu is the largest IPv4 packet (total length) a port carries (default 9000 B);
	// its Ethernet frame is Mtu+18 bytes, Mtu+38 on the wire. Range 68..65535.
	Mtu units.Bytes `yaml:"Mtu"`
	// ForwardingLatency delays a received frame before ingress admission (default 0).
	// Must be >= 0.
	ForwardingLatency units.Time `yaml:"ForwardingLatency"`
	// SwitchingCapacity is compared with the switch's bandwidth (sum of port speeds)
	// to report oversubscription; it never limits forwarding. 0 (default) = the sum of
	// the port speeds. Must be >= 0.
	SwitchingCapacity units.BitRate `yaml:"SwitchingCapacity"`
	// EcmpHashMethod is the flow hash of equal-cost sets (docs/model.md#ecmp-hashing): crc32,
	// crc32WithSalt (default), crc16, crc16Ccitt, xor16 or toeplitz.
	EcmpHashMethod ecmp.Method `yaml:"EcmpHashMethod"`
	// HashSalt is the salt of crc32WithSalt. nil (default; YAML null) = per switch,
	// ecmp.DefaultSalt(switch name, Seed) = crc32IEEE(name) XOR uint32(Seed). A value
	// (YAML accepts 0x1234abcd) gives every switch the same salt, which correlates the
	// tiers' choices like an unsalted method does.
	HashSalt *uint32 `yaml:"HashSalt"`
	// LoadBalancingMethod is none (default: member = hash mod set size) or flowlet
	// (docs/model.md#load-balancing).
	LoadBalancingMethod ecmp.LoadBalancing `yaml:"LoadBalancingMethod"`
	// Flowlet configures LoadBalancingMethod flowlet (docs/model.md#load-balancing).
	Flowlet Flowlet `yaml:"Flowlet"`
	// BufferStatsReportInterval is the period of the per-(switch, pool) buffer samples
	// (default 100 us). 0 = no periodic samples. Must be >= 0.
	BufferStatsReportInterval units.Time `yaml:"BufferStatsReportInterval"`
}

// Pool is one shared-buffer pool (docs/model.md#shared-buffer).
type Pool struct {
	// Name labels the pool in records ("lossy", "lossless"); unique and non-empty.
	Name string `yaml:"Name"`
	// Size is a share of the buffer left after headroom ("60%") or bytes ("12MiB").
	Size PoolSize `yaml:"Size"`
	// TrafficClasses are the TCs (0..7) mapped to this pool.
	TrafficClasses []int `yaml:"TrafficClasses"`
}

// EcnOverride overrides the ECN parameters of one TC; nil fields keep the switch-wide
// value.
type EcnOverride struct {
	EcnMinThreshold   *units.Bytes `yaml:"EcnMinThreshold,omitempty"`
	EcnMaxThreshold   *units.Bytes `yaml:"EcnMaxThreshold,omitempty"`
	EcnMaxProbability *float64     `yaml:"EcnMaxProbability,omitempty"`
}

// Flowlet configures the flowlet load balancer (docs/model.md#load-balancing).
type Flowlet struct {
	// Gap is the idle time after which a flow's next packet starts a new flowlet
	// (default 100 us). Must be >= 0.
	Gap units.Time `yaml:"Gap"`
	// FlowTableSize is the number of hashed flow-table entries, shared by colliding
	// flows as in hardware; 0 (default) = exact table, one entry per flow.
	FlowTableSize int `yaml:"FlowTableSize"`
	// PreferUnpaused avoids members whose port is PFC-paused for the packet's class
	// while an unpaused member exists (default true).
	PreferUnpaused bool `yaml:"PreferUnpaused"`
}

// Topology is the Clos fabric (docs/model.md#clos-builder). Pods: 1 makes a two-tier rack/fabric Clos
// without spines. File, when set, replaces the Clos by a topology file.
type Topology struct {
	// File is a topology file (docs/topology.md): a YAML topology (a generator or
	// explicit node and link lists) or an ns-3 HPCC topology.txt. "" (default): the
	// Clos of the attributes below, which a file ignores.
	File string `yaml:"File"`
	// Pods is the number of pods (default 2), >= 1.
	Pods int `yaml:"Pods"`
	// RacksPerPod is the number of rack (ToR) switches per pod (default 4), >= 1.
	RacksPerPod int `yaml:"RacksPerPod"`
	// HostsPerRack is the number of hosts under each rack switch (default 16), >= 1.
	HostsPerRack int `yaml:"HostsPerRack"`
	// FabricPerPod is the number of fabric switches per pod, also the number of spine
	// planes (default 4), >= 1.
	FabricPerPod int `yaml:"FabricPerPod"`
	// SpinesPerPlane is the number of spines in each plane (default 4); >= 1 when
	// Pods > 1, unused when Pods == 1.
	SpinesPerPlane int `yaml:"SpinesPerPlane"`
	// HostLink joins a host and its rack switch.
	HostLink Link `yaml:"HostLink"`
	// RackFabricLink joins a rack switch and a fabric switch of its pod.
	RackFabricLink Link `yaml:"RackFabricLink"`
	// FabricSpineLink joins fabric switch i of a pod and a spine of plane i.
	FabricSpineLink Link `yaml:"FabricSpineLink"`
}

// Link is a full-duplex link (docs/model.md#ports-links-and-scheduling).
type Link struct {
	// Speed in bits per second (default 100 Gbps). Must be > 0.
	Speed units.BitRate `yaml:"Speed"`
	// PropagationDelay one way (default 1 us). Must be >= 0.
	PropagationDelay units.Time `yaml:"PropagationDelay"`
}

// Default returns the default configuration (docs/model.md#switch-model, docs/model.md#clos-builder). Every call returns
// fresh slices, so callers may modify the result.
func Default() Config {
	link := Link{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond}
	return Config{
		Seed: 1,
		Switch: Switch{
			BufferSize: 32 * units.MiB,
			CellSize:   256,
			Pools: []Pool{
				{Name: "lossy", Size: PoolShare(0.6), TrafficClasses: []int{0, 1, 2, 5, 6, 7}},
				{Name: "lossless", Size: PoolShare(0.4), TrafficClasses: []int{3, 4}},
			},
			PfcEnabled:                []int{3, 4},
			Headroom:                  HeadroomAuto(),
			XoffAlpha:                 0.125,
			Xoff:                      0,
			Xon:                       4608,
			XonOffset:                 4608,
			EgressLimitMode:           EgressDynamic,
			EgressAlpha:               8,
			EcnEnabled:                []int{0, 1, 2, 3, 4, 5, 6, 7},
			EcnMinThreshold:           400 * units.KB,
			EcnMaxThreshold:           1600 * units.KB,
			EcnMaxProbability:         0.2,
			EcnWeight:                 1.0,
			EcnMarkAt:                 EcnAtDequeue,
			Mtu:                       9000,
			ForwardingLatency:         0,
			SwitchingCapacity:         0,
			EcmpHashMethod:            ecmp.CRC32WithSalt,
			HashSalt:                  nil,
			LoadBalancingMethod:       ecmp.None,
			Flowlet:                   Flowlet{Gap: 100 * units.Microsecond, FlowTableSize: 0, PreferUnpaused: true},
			BufferStatsReportInterval: 100 * units.Microsecond,
		},
		Topology: Topology{
			Pods:            2,
			RacksPerPod:     4,
			HostsPerRack:    16,
			FabricPerPod:    4,
			SpinesPerPlane:  4,
			HostLink:        link,
			RackFabricLink:  link,
			FabricSpineLink: link,
		},
		Transport: DefaultTransport(),
	}
}

// ComponentSeed returns the two PCG seed words of a component's generator:
// (uint64(seed), uint64(crc32IEEE(component))). Components name themselves by the
// node name and their job, e.g. "rack-p0-r1/ecn" or "replay/hosts"; distinct names
// give independent streams, and the same (Seed, name) always gives the same stream.
func ComponentSeed(seed int64, component string) (uint64, uint64) {
	return uint64(seed), uint64(crc32.ChecksumIEEE([]byte(component)))
}

// Rand returns a new PCG generator for the named component, seeded by ComponentSeed
// from c.Seed.
func (c *Config) Rand(component string) *rand.Rand {
	s1, s2 := ComponentSeed(c.Seed, component)
	return rand.New(rand.NewPCG(s1, s2))
}

// Ecn holds the resolved ECN parameters of one TC (docs/model.md#ecn-marking).
type Ecn struct {
	Enabled        bool
	MinThreshold   units.Bytes
	MaxThreshold   units.Bytes
	MaxProbability float64
	Weight         float64
}

// Ecn resolves the ECN parameters of traffic class tc (0..7): EcnEnabled, the
// switch-wide thresholds and probability with any EcnClasses override, and EcnWeight.
func (s *Switch) Ecn(tc int) Ecn {
	e := Ecn{
		MinThreshold:   s.EcnMinThreshold,
		MaxThreshold:   s.EcnMaxThreshold,
		MaxProbability: s.EcnMaxProbability,
		Weight:         s.EcnWeight,
	}
	for _, t := range s.EcnEnabled {
		if t == tc {
			e.Enabled = true
		}
	}
	if o, ok := s.EcnClasses[tc]; ok {
		if o.EcnMinThreshold != nil {
			e.MinThreshold = *o.EcnMinThreshold
		}
		if o.EcnMaxThreshold != nil {
			e.MaxThreshold = *o.EcnMaxThreshold
		}
		if o.EcnMaxProbability != nil {
			e.MaxProbability = *o.EcnMaxProbability
		}
	}
	return e
}

// PfcOn reports whether PFC is enabled for traffic class tc.
func (s *Switch) PfcOn(tc int) bool {
	for _, t := range s.PfcEnabled {
		if t == tc {
			return true
		}
	}
	return false
}

// PoolOf returns the index of the pool that traffic class tc maps to, or -1.
func (s *Switch) PoolOf(tc int) int {
	for i, p := range s.Pools {
		for _, t := range p.TrafficClasses {
			if t == tc {
				return i
			}
		}
	}
	return -1
}

// Lossless reports whether pool i is lossless: it has traffic classes and all of them
// have PFC enabled (Validate rejects pools that mix).
func (s *Switch) Lossless(i int) bool {
	p := s.Pools[i]
	if len(p.TrafficClasses) == 0 {
		return false
	}
	for _, t := range p.TrafficClasses {
		if !s.PfcOn(t) {
			return false
		}
	}
	return true
}

// SaltFor returns the HashSalt of the named switch: the configured HashSalt, or
// ecmp.DefaultSalt(switchName, seed).
func (s *Switch) SaltFor(switchName string, seed int64) uint32 {
	if s.HashSalt != nil {
		return *s.HashSalt
	}
	return ecmp.DefaultSalt(switchName, seed)
}

// ECMP returns the named switch's ecmp.Config: hash method, salt (SaltFor), load
// balancing method and flowlet parameters, from Switch (ECMPFor: from a profile).
func (c *Config) ECMP(switchName string) ecmp.Config {
	return ecmpFor(&c.Switch, switchName, c.Seed)
}

type ecmpConfig = ecmp.Config

func ecmpFor(s *Switch, switchName string, seed int64) ecmp.Config {
	return ecmp.Config{
		Method:         s.EcmpHashMethod,
		Salt:           s.SaltFor(switchName, seed),
		LoadBalancing:  s.LoadBalancingMethod,
		Gap:            s.Flowlet.Gap,
		FlowTableSize:  s.Flowlet.FlowTableSize,
		PreferUnpaused: s.Flowlet.PreferUnpaused,
	}
}
