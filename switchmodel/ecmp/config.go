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
	return errors.Join(errs...)
}
