package config

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tracefabric/tracefabric/internal/units"
)

// ErrSyntax is wrapped by the parse errors of this package's value types.
var ErrSyntax = errors.New("invalid value")

// PoolSize is a pool's size: a share of the buffer left after headroom ("60%", or
// "0.6") or a number of bytes ("12MiB", "400KB", "9000").
type PoolSize struct {
	// Share > 0 sizes the pool as Share * (BufferSize - total headroom).
	Share units.Fraction
	// Bytes sizes the pool in bytes when Share is 0.
	Bytes units.Bytes
}

// PoolShare returns a PoolSize of share f of the buffer left after headroom.
func PoolShare(f float64) PoolSize { return PoolSize{Share: units.Fraction(f)} }

// PoolBytes returns a PoolSize of b bytes.
func PoolBytes(b units.Bytes) PoolSize { return PoolSize{Bytes: b} }

// Resolve returns the pool's size in bytes given the buffer left after headroom,
// rounded down to whole cells (cell > 0) so that the pools never exceed the buffer.
func (p PoolSize) Resolve(left, cell units.Bytes) units.Bytes {
	b := p.Bytes
	if p.Share != 0 {
		b = units.Bytes(math.Floor(float64(p.Share) * float64(left)))
	}
	if cell > 0 && b > 0 {
		b -= b % cell
	}
	return b
}

// String prints "60%" or the size in bytes ("12MiB").
func (p PoolSize) String() string {
	if p.Share != 0 {
		return p.Share.String()
	}
	return p.Bytes.String()
}

// ParsePoolSize reads "60%", "0.6" (a share) or a size with a unit or a bare integer
// byte count ("12MiB", "9000"). A bare number below 1 with a fraction part (0.6) is a
// share; a bare integer is bytes.
func ParsePoolSize(s string) (PoolSize, error) {
	in := strings.TrimSpace(s)
	if strings.HasSuffix(in, "%") {
		f, err := units.ParseFraction(in)
		if err != nil {
			return PoolSize{}, fmt.Errorf("%w: pool size %q: %v", ErrSyntax, s, err)
		}
		return PoolSize{Share: f}, nil
	}
	if b, err := units.ParseBytes(in); err == nil {
		return PoolSize{Bytes: b}, nil
	}
	if f, err := units.ParseFraction(in); err == nil && f > 0 && f <= 1 {
		return PoolSize{Share: f}, nil
	}
	return PoolSize{}, fmt.Errorf("%w: pool size %q is neither a share (\"60%%\") nor a size (\"12MiB\")", ErrSyntax, s)
}

// MarshalText implements encoding.TextMarshaler.
func (p PoolSize) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *PoolSize) UnmarshalText(b []byte) error {
	v, err := ParsePoolSize(string(b))
	if err == nil {
		*p = v
	}
	return err
}

// MarshalYAML implements yaml.Marshaler.
func (p PoolSize) MarshalYAML() (any, error) { return units.PlainScalar(p.String()), nil }

// UnmarshalYAML implements yaml.Unmarshaler.
func (p *PoolSize) UnmarshalYAML(n *yaml.Node) error { return unmarshalScalar(n, p) }

// Headroom is the per-(port, lossless pool) headroom setting: "auto" (docs/model.md#headroom-sizing, per
// port) or a fixed size in bytes for every port.
type Headroom struct {
	// Auto sizes headroom per port with AutoHeadroom.
	Auto bool
	// Size is the fixed headroom in bytes when Auto is false (0 = no headroom).
	Size units.Bytes
}

// HeadroomAuto returns the "auto" Headroom setting (the default).
func HeadroomAuto() Headroom { return Headroom{Auto: true} }

// FixedHeadroom returns a fixed Headroom of b bytes per (port, lossless pool).
func FixedHeadroom(b units.Bytes) Headroom { return Headroom{Size: b} }

// String prints "auto" or the fixed size ("200KiB").
func (h Headroom) String() string {
	if h.Auto {
		return "auto"
	}
	return h.Size.String()
}

// ParseHeadroom reads "auto" or a size ("200KiB", "208384").
func ParseHeadroom(s string) (Headroom, error) {
	in := strings.TrimSpace(s)
	if in == "auto" {
		return HeadroomAuto(), nil
	}
	b, err := units.ParseBytes(in)
	if err != nil {
		return Headroom{}, fmt.Errorf("%w: headroom %q is neither \"auto\" nor a size (\"200KiB\"): %v", ErrSyntax, s, err)
	}
	return Headroom{Size: b}, nil
}

// MarshalText implements encoding.TextMarshaler.
func (h Headroom) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (h *Headroom) UnmarshalText(b []byte) error {
	v, err := ParseHeadroom(string(b))
	if err == nil {
		*h = v
	}
	return err
}

// MarshalYAML implements yaml.Marshaler.
func (h Headroom) MarshalYAML() (any, error) { return units.PlainScalar(h.String()), nil }

// UnmarshalYAML implements yaml.Unmarshaler.
func (h *Headroom) UnmarshalYAML(n *yaml.Node) error { return unmarshalScalar(n, h) }

// EgressLimitMode selects how lossy egress queues are limited (docs/model.md#shared-buffer).
type EgressLimitMode int

const (
	// EgressDynamic limits a queue to EgressAlpha * (PoolSize - PoolUsed) (default).
	EgressDynamic EgressLimitMode = iota
	// EgressFixed limits a queue to EgressQueueLimitBdp * BDP or EgressQueueLimit.
	EgressFixed
)

// String prints "dynamic" or "fixed".
func (m EgressLimitMode) String() string {
	switch m {
	case EgressDynamic:
		return "dynamic"
	case EgressFixed:
		return "fixed"
	}
	return fmt.Sprintf("EgressLimitMode(%d)", int(m))
}

// ParseEgressLimitMode reads "dynamic" or "fixed".
func ParseEgressLimitMode(s string) (EgressLimitMode, error) {
	switch strings.TrimSpace(s) {
	case "dynamic":
		return EgressDynamic, nil
	case "fixed":
		return EgressFixed, nil
	}
	return 0, fmt.Errorf("%w: egress limit mode %q is unknown (want dynamic or fixed)", ErrSyntax, s)
}

// MarshalText implements encoding.TextMarshaler.
func (m EgressLimitMode) MarshalText() ([]byte, error) {
	if m != EgressDynamic && m != EgressFixed {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *EgressLimitMode) UnmarshalText(b []byte) error {
	v, err := ParseEgressLimitMode(string(b))
	if err == nil {
		*m = v
	}
	return err
}

// MarshalYAML implements yaml.Marshaler.
func (m EgressLimitMode) MarshalYAML() (any, error) {
	b, err := m.MarshalText()
	return string(b), err
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (m *EgressLimitMode) UnmarshalYAML(n *yaml.Node) error { return unmarshalScalar(n, m) }

// EcnMarkAt is where a switch's ECN marker looks at its egress queue
// (docs/model.md#ecn-marking).
type EcnMarkAt int

const (
	// EcnAtDequeue marks a packet when it starts transmitting, on the queue it leaves
	// behind (default: the model's rule, as HPCC's ns-3 switch and hardware do).
	EcnAtDequeue EcnMarkAt = iota
	// EcnAtEnqueue marks a packet when it is admitted, on the queue including it (the
	// RED of ns-3's inet-tub/ns3-datacenter switch).
	EcnAtEnqueue
)

var ecnMarkAtNames = []string{"dequeue", "enqueue"}

func (m EcnMarkAt) valid() bool { return m >= 0 && int(m) < len(ecnMarkAtNames) }

// String prints "dequeue" or "enqueue".
func (m EcnMarkAt) String() string {
	if !m.valid() {
		return fmt.Sprintf("EcnMarkAt(%d)", int(m))
	}
	return ecnMarkAtNames[m]
}

// ParseEcnMarkAt reads "dequeue" or "enqueue".
func ParseEcnMarkAt(s string) (EcnMarkAt, error) {
	v, err := parseEnumName(ecnMarkAtNames, s, "ECN marking point")
	return EcnMarkAt(v), err
}

// MarshalText implements encoding.TextMarshaler.
func (m EcnMarkAt) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *EcnMarkAt) UnmarshalText(b []byte) (err error) {
	*m, err = ParseEcnMarkAt(string(b))
	return err
}

// MarshalYAML implements yaml.Marshaler.
func (m EcnMarkAt) MarshalYAML() (any, error) {
	b, err := m.MarshalText()
	return string(b), err
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (m *EcnMarkAt) UnmarshalYAML(n *yaml.Node) error { return unmarshalScalar(n, m) }

type textUnmarshaler interface{ UnmarshalText([]byte) error }

func unmarshalScalar(n *yaml.Node, v textUnmarshaler) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a scalar value", n.Line)
	}
	return v.UnmarshalText([]byte(n.Value))
}

// WatchdogAction is what the PFC watchdog does to a stormed (port, class)
// (docs/model.md#pfc-watchdog), as SONiC's pfcwd actions.
type WatchdogAction int

const (
	// WatchdogDrop discards the class's queue and its new arrivals and ignores its
	// pauses until restoration (default).
	WatchdogDrop WatchdogAction = iota
	// WatchdogForward ignores the class's pauses until restoration.
	WatchdogForward
	// WatchdogAlert only records the storm.
	WatchdogAlert
)

var watchdogActions = [...]string{"drop", "forward", "alert"}

// String prints "drop", "forward" or "alert".
func (a WatchdogAction) String() string {
	if a >= 0 && int(a) < len(watchdogActions) {
		return watchdogActions[a]
	}
	return fmt.Sprintf("WatchdogAction(%d)", int(a))
}

func (a WatchdogAction) valid() bool { return a >= 0 && int(a) < len(watchdogActions) }

// ParseWatchdogAction reads "drop", "forward" or "alert".
func ParseWatchdogAction(s string) (WatchdogAction, error) {
	for i, n := range watchdogActions {
		if strings.TrimSpace(s) == n {
			return WatchdogAction(i), nil
		}
	}
	return 0, fmt.Errorf("%w: PFC watchdog action %q is unknown (want drop, forward or alert)", ErrSyntax, s)
}

// MarshalText implements encoding.TextMarshaler.
func (a WatchdogAction) MarshalText() ([]byte, error) {
	if !a.valid() {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, a)
	}
	return []byte(a.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *WatchdogAction) UnmarshalText(b []byte) error {
	v, err := ParseWatchdogAction(string(b))
	if err == nil {
		*a = v
	}
	return err
}

// MarshalYAML implements yaml.Marshaler.
func (a WatchdogAction) MarshalYAML() (any, error) {
	b, err := a.MarshalText()
	return string(b), err
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (a *WatchdogAction) UnmarshalYAML(n *yaml.Node) error { return unmarshalScalar(n, a) }
