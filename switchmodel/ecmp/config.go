package ecmp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tracefabric/tracefabric/internal/units"
)

// LoadBalancing is the load-balancing method (the switch attribute
// LoadBalancingMethod). The zero value is None, the default.
type LoadBalancing uint8

// Load-balancing methods.
const (
	None    LoadBalancing = iota // none: member = flow hash mod set size
	Flowlet                      // flowlet: flowlet switching to the least occupied member (docs/model.md#load-balancing)

	numLoadBalancing = iota
)

var lbNames = [numLoadBalancing]string{"none", "flowlet"}

// ErrUnknownLoadBalancing is wrapped by the errors of ParseLoadBalancing.
var ErrUnknownLoadBalancing = errors.New("unknown load-balancing method")

// Valid reports whether l is None or Flowlet.
func (l LoadBalancing) Valid() bool { return l < numLoadBalancing }

// String returns "none" or "flowlet".
func (l LoadBalancing) String() string {
	if l.Valid() {
		return lbNames[l]
	}
	return fmt.Sprintf("LoadBalancing(%d)", uint8(l))
}

// ParseLoadBalancing parses "none" or "flowlet" (case-insensitive).
func ParseLoadBalancing(s string) (LoadBalancing, error) {
	for i, n := range lbNames {
		if strings.EqualFold(s, n) {
			return LoadBalancing(i), nil
		}
	}
	return 0, fmt.Errorf("ecmp: LoadBalancingMethod %q: %w (valid: %s)", s, ErrUnknownLoadBalancing,
		strings.Join(lbNames[:], ", "))
}

// MarshalText implements encoding.TextMarshaler.
func (l LoadBalancing) MarshalText() ([]byte, error) {
	if !l.Valid() {
		return nil, fmt.Errorf("ecmp: cannot marshal invalid LoadBalancing(%d)", uint8(l))
	}
	return []byte(lbNames[l]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (l *LoadBalancing) UnmarshalText(b []byte) error {
	v, err := ParseLoadBalancing(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// Set implements pflag.Value.
func (l *LoadBalancing) Set(s string) error { return l.UnmarshalText([]byte(s)) }

// Type implements pflag.Value.
func (l *LoadBalancing) Type() string { return "loadBalancing" }

// HashTable is how a set's member follows from the flow hash (the switch attribute
// HashTable; docs/model.md#rehashing). The zero value is Modulo, the default.
type HashTable uint8

// Hash tables.
const (
	Modulo    HashTable = iota // modulo: member = the (hash mod live members)-th live member
	Resilient                  // resilient: a table of ResilientBuckets buckets; a lost member's buckets alone move

	numHashTables = iota
)

var tableNames = [numHashTables]string{"modulo", "resilient"}

// ErrUnknownHashTable is wrapped by the errors of ParseHashTable.
var ErrUnknownHashTable = errors.New("unknown hash table")

// Valid reports whether t is Modulo or Resilient.
func (t HashTable) Valid() bool { return t < numHashTables }

// String returns "modulo" or "resilient".
func (t HashTable) String() string {
	if t.Valid() {
		return tableNames[t]
	}
	return fmt.Sprintf("HashTable(%d)", uint8(t))
}

// ParseHashTable parses "modulo" or "resilient" (case-insensitive).
func ParseHashTable(s string) (HashTable, error) {
	for i, n := range tableNames {
		if strings.EqualFold(s, n) {
			return HashTable(i), nil
		}
	}
	return 0, fmt.Errorf("ecmp: HashTable %q: %w (valid: %s)", s, ErrUnknownHashTable, strings.Join(tableNames[:], ", "))
}

// MarshalText implements encoding.TextMarshaler.
func (t HashTable) MarshalText() ([]byte, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("ecmp: cannot marshal invalid HashTable(%d)", uint8(t))
	}
	return []byte(tableNames[t]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *HashTable) UnmarshalText(b []byte) error {
	v, err := ParseHashTable(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// DefaultResilientBuckets is the default bucket count of a resilient set (as switch
// ASICs' resilient ECMP groups).
const DefaultResilientBuckets = 256

// MaxResilientBuckets bounds ResilientBuckets.
const MaxResilientBuckets = 1 << 16

// DefaultGap is the default flowlet gap.
const DefaultGap = 100 * units.Microsecond

// MaxFlowTableSize bounds FlowTableSize (entries per equal-cost set).
const MaxFlowTableSize = 1 << 24

// Config is a switch's ECMP and load-balancing configuration. The YAML/JSON names are
// the switch attributes of the seed.
type Config struct {
	// Method is the hash method (EcmpHashMethod). Default CRC32WithSalt.
	Method Method `yaml:"EcmpHashMethod" json:"EcmpHashMethod"`
	// Salt is the switch's HashSalt, used only by CRC32WithSalt. It is used as given:
	// the switch fills in DefaultSalt(name, seed) when the attribute is not set.
	Salt uint32 `yaml:"HashSalt" json:"HashSalt"`
	// LoadBalancing is LoadBalancingMethod: None (default) or Flowlet.
	LoadBalancing LoadBalancing `yaml:"LoadBalancingMethod" json:"LoadBalancingMethod"`
	// Gap is the flowlet gap, picoseconds: a packet whose flow has been idle for Gap
	// or longer starts a new flowlet. Default 100us; 0 makes every packet a flowlet;
	// negative is invalid. Flowlet only.
	Gap units.Time `yaml:"Gap" json:"Gap"`
	// FlowTableSize is the number of flow-table entries per equal-cost set, shared by
	// the flows whose hash is equal mod FlowTableSize; 0 (default) is an exact table
	// with one entry per flow. At most MaxFlowTableSize. Flowlet only.
	FlowTableSize int `yaml:"FlowTableSize" json:"FlowTableSize"`
	// PreferUnpaused makes a new flowlet avoid members whose port is PFC-paused for
	// the packet's class while an unpaused member exists. Default true. Flowlet only.
	PreferUnpaused bool `yaml:"PreferUnpaused" json:"PreferUnpaused"`
	// Table is HashTable: Modulo (default) or Resilient.
	Table HashTable `yaml:"HashTable" json:"HashTable"`
	// Buckets is ResilientBuckets, the buckets of a resilient set (default 256; a
	// set with more slots gets one bucket per slot). Resilient only.
	Buckets int `yaml:"ResilientBuckets" json:"ResilientBuckets"`
}

// DefaultConfig returns the defaults: CRC32WithSalt, salt 0 (the switch sets
// DefaultSalt), None, Gap 100us, exact flow table, PreferUnpaused.
func DefaultConfig() Config {
	return Config{
		Method:         DefaultMethod,
		LoadBalancing:  None,
		Gap:            DefaultGap,
		FlowTableSize:  0,
		PreferUnpaused: true,
		Table:          Modulo,
		Buckets:        DefaultResilientBuckets,
	}
}

// Validate checks every field; the error names the attribute and the rule.
func (c Config) Validate() error {
	var errs []error
	if !c.Method.Valid() {
		errs = append(errs, fmt.Errorf("ecmp: EcmpHashMethod %v: %w (valid: %s)", c.Method, ErrUnknownMethod,
			strings.Join(methodNames[:], ", ")))
	}
	if !c.LoadBalancing.Valid() {
		errs = append(errs, fmt.Errorf("ecmp: LoadBalancingMethod %v: %w (valid: %s)", c.LoadBalancing,
			ErrUnknownLoadBalancing, strings.Join(lbNames[:], ", ")))
	}
	if c.Gap < 0 {
		errs = append(errs, fmt.Errorf("ecmp: Gap %v must not be negative", c.Gap))
	}
	if c.FlowTableSize < 0 || c.FlowTableSize > MaxFlowTableSize {
		errs = append(errs, fmt.Errorf("ecmp: FlowTableSize %d must be in [0, %d] (0 = exact table)",
			c.FlowTableSize, MaxFlowTableSize))
	}
	if !c.Table.Valid() {
		errs = append(errs, fmt.Errorf("ecmp: HashTable %v: %w (valid: %s)", c.Table, ErrUnknownHashTable, strings.Join(tableNames[:], ", ")))
	}
	if c.Table == Resilient && (c.Buckets < 1 || c.Buckets > MaxResilientBuckets) {
		errs = append(errs, fmt.Errorf("ecmp: ResilientBuckets %d must be in [1, %d]", c.Buckets, MaxResilientBuckets))
	}
	return errors.Join(errs...)
}
