package units

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Time is simulated time in picoseconds: an instant since the start of the
// simulation, or a duration.
type Time int64

// Durations.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000 * Picosecond
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// Bytes is a size in bytes.
type Bytes int64

// Sizes: decimal (SI) and binary (IEC) multiples.
const (
	B   Bytes = 1
	KB  Bytes = 1000
	MB  Bytes = 1000 * KB
	GB  Bytes = 1000 * MB
	KiB Bytes = 1024
	MiB Bytes = 1024 * KiB
	GiB Bytes = 1024 * MiB
)

// BitRate is a link speed in bits per second.
type BitRate int64

// Speeds.
const (
	Bps  BitRate = 1
	Kbps BitRate = 1000
	Mbps BitRate = 1000 * Kbps
	Gbps BitRate = 1000 * Mbps
	Tbps BitRate = 1000 * Gbps
)

// Fraction is a share in [0,1] (or beyond, where a rule allows); "40%" is 0.4.
type Fraction float64

// SerializationTime is the time to put wireBytes on a link of speed rate:
// ceil(wireBytes*8*1e12/rate) picoseconds, computed without overflow.
// It panics only on a non-positive rate, which configuration validation excludes.
func SerializationTime(wireBytes int64, rate BitRate) Time {
	if rate <= 0 {
		panic("units: SerializationTime with non-positive rate")
	}
	if wireBytes <= 0 {
		return 0
	}
	if wireBytes > math.MaxInt64/8 {
		return Time(math.MaxInt64)
	}
	hi, lo := bits.Mul64(uint64(wireBytes)*8, uint64(Second))
	if hi >= uint64(rate) {
		return Time(math.MaxInt64) // beyond int64 picoseconds: saturate
	}
	q, r := bits.Div64(hi, lo, uint64(rate))
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return Time(math.MaxInt64)
	}
	return Time(q)
}

// BytesIn returns how many whole bytes rate carries in d (floor(rate*d/8)); 0 for a
// non-positive rate or duration, math.MaxInt64 when the result does not fit.
func BytesIn(rate BitRate, d Time) Bytes {
	if rate <= 0 || d <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(rate), uint64(d))
	if hi >= 8*uint64(Second) {
		return Bytes(math.MaxInt64)
	}
	q, _ := bits.Div64(hi, lo, 8*uint64(Second))
	if q > math.MaxInt64 {
		return Bytes(math.MaxInt64)
	}
	return Bytes(q)
}

type unit struct {
	name  string
	scale int64
}

var timeUnits = []unit{
	{"s", int64(Second)}, {"ms", int64(Millisecond)}, {"us", int64(Microsecond)},
	{"µs", int64(Microsecond)}, {"ns", int64(Nanosecond)}, {"ps", 1}, {"", 1},
}

var byteUnits = []unit{
	{"GiB", int64(GiB)}, {"MiB", int64(MiB)}, {"KiB", int64(KiB)},
	{"GB", int64(GB)}, {"MB", int64(MB)}, {"KB", int64(KB)}, {"kB", int64(KB)},
	{"B", 1}, {"", 1},
}

var rateUnits = []unit{
	{"Tbps", int64(Tbps)}, {"Gbps", int64(Gbps)}, {"Mbps", int64(Mbps)},
	{"Kbps", int64(Kbps)}, {"kbps", int64(Kbps)}, {"bps", 1},
	{"T", int64(Tbps)}, {"G", int64(Gbps)}, {"M", int64(Mbps)}, {"K", int64(Kbps)},
	{"k", int64(Kbps)}, {"", 1},
}

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("invalid quantity")

// parse reads "<decimal><unit>" exactly and returns the value in base units.
func parse(s, what string, units []unit, bare bool) (int64, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("%w: empty %s", ErrSyntax, what)
	}
	num, suffix := splitNumber(in)
	if num == "" {
		return 0, fmt.Errorf("%w: %q is not a %s (want a number and a unit, e.g. %s)", ErrSyntax, s, what, example(what))
	}
	for _, u := range units {
		if u.name != suffix {
			continue
		}
		if u.name == "" && !bare && num != "0" {
			return 0, fmt.Errorf("%w: %q has no unit (want e.g. %s)", ErrSyntax, s, example(what))
		}
		if i := strings.IndexAny(num, "eE"); i >= 0 {
			if e, err := strconv.Atoi(num[i+1:]); err != nil || e > 40 || e < -40 {
				return 0, fmt.Errorf("%w: %q is out of range", ErrSyntax, s)
			}
		}
		r, ok := new(big.Rat).SetString(num)
		if !ok {
			return 0, fmt.Errorf("%w: %q is not a %s", ErrSyntax, s, what)
		}
		r.Mul(r, new(big.Rat).SetInt64(u.scale))
		if !r.IsInt() {
			return 0, fmt.Errorf("%w: %q is not a whole number of %s", ErrSyntax, s, baseName(what))
		}
		if !r.Num().IsInt64() {
			return 0, fmt.Errorf("%w: %q is out of range", ErrSyntax, s)
		}
		return r.Num().Int64(), nil
	}
	return 0, fmt.Errorf("%w: %q has an unknown unit %q for a %s (want e.g. %s)", ErrSyntax, s, suffix, what, example(what))
}

func splitNumber(s string) (num, suffix string) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := false
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		if s[i] != '.' {
			digits = true
		}
		i++
	}
	// Exponent ("1e6").
	if digits && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	if !digits {
		return "", s
	}
	return s[:i], strings.TrimSpace(s[i:])
}

func example(what string) string {
	switch what {
	case "duration":
		return `"1us", "500ns", "1.5ms"`
	case "size":
		return `"32MiB", "400KB", "9000"`
	case "speed":
		return `"100Gbps", "25G"`
	}
	return `"40%", "0.4"`
}

func baseName(what string) string {
	switch what {
	case "duration":
		return "picoseconds"
	case "size":
		return "bytes"
	}
	return "bits per second"
}

// ParseTime reads a duration such as "1us", "500ns", "1.5ms", "2s" or "0".
func ParseTime(s string) (Time, error) {
	v, err := parse(s, "duration", timeUnits, false)
	return Time(v), err
}

// ParseBytes reads a size such as "32MiB", "400KB", "256B" or a bare byte count "9000".
func ParseBytes(s string) (Bytes, error) {
	v, err := parse(s, "size", byteUnits, true)
	return Bytes(v), err
}

// ParseBitRate reads a speed such as "100Gbps", "25G" or a bare bits-per-second count.
func ParseBitRate(s string) (BitRate, error) {
	v, err := parse(s, "speed", rateUnits, true)
	return BitRate(v), err
}

// ParseFraction reads "40%" or "0.4".
func ParseFraction(s string) (Fraction, error) {
	in := strings.TrimSpace(s)
	pct := strings.HasSuffix(in, "%")
	in = strings.TrimSpace(strings.TrimSuffix(in, "%"))
	f, err := strconv.ParseFloat(in, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a fraction (want e.g. %s)", ErrSyntax, s, example("fraction"))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%w: %q is not a finite fraction", ErrSyntax, s)
	}
	if pct {
		f /= 100
	}
	return Fraction(f), nil
}

func format(v int64, units []unit) string {
	if v == 0 {
		return "0"
	}
	for _, u := range units {
		if u.scale > 1 && v%u.scale == 0 && u.name != "µs" && u.name != "kB" && u.name != "kbps" {
			return fmt.Sprintf("%d%s", v/u.scale, u.name)
		}
	}
	return ""
}

// String prints the shortest exact spelling, e.g. "1us", "167772160ps".
func (t Time) String() string {
	if s := format(int64(t), timeUnits); s != "" {
		return s
	}
	return fmt.Sprintf("%dps", int64(t))
}

// String prints the shortest exact spelling, e.g. "32MiB", "400KB", "208384B"; sizes
// below 10,000 bytes print in bytes ("9000B", "4608B", "256B"), the way MTUs and cell
// sizes are written.
func (b Bytes) String() string {
	if (b >= 10000 || b <= -10000) && (b%1000 == 0 || b%1024 == 0) {
		// Prefer binary units when both divide (e.g. 0 is handled by format).
		for _, u := range []unit{{"GiB", int64(GiB)}, {"MiB", int64(MiB)}, {"KiB", int64(KiB)}, {"GB", int64(GB)}, {"MB", int64(MB)}, {"KB", int64(KB)}} {
			if int64(b)%u.scale == 0 && b != 0 {
				return fmt.Sprintf("%d%s", int64(b)/u.scale, u.name)
			}
		}
	}
	if b == 0 {
		return "0"
	}
	return fmt.Sprintf("%dB", int64(b))
}

// String prints the shortest exact spelling, e.g. "100Gbps".
func (r BitRate) String() string {
	for _, u := range rateUnits[:5] {
		if r != 0 && int64(r)%u.scale == 0 {
			return fmt.Sprintf("%d%s", int64(r)/u.scale, u.name)
		}
	}
	return fmt.Sprintf("%dbps", int64(r))
}

// String prints the fraction as the shortest percentage that parses back to exactly
// f, e.g. "40%" or "7%" (not "7.000000000000001%"); a fraction that no percentage
// spelling reproduces exactly (1/3) prints as its shortest decimal, "0.3333333333333333".
func (f Fraction) String() string {
	for prec := 1; prec <= 17; prec++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f)*100, 'g', prec, 64), 64)
		s := strconv.FormatFloat(v, 'f', -1, 64) + "%"
		if back, err := ParseFraction(s); err == nil && back == f {
			return s
		}
	}
	return strconv.FormatFloat(float64(f), 'g', -1, 64)
}

// MarshalText implements encoding.TextMarshaler.
func (t Time) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Time) UnmarshalText(b []byte) error {
	v, err := ParseTime(string(b))
	if err == nil {
		*t = v
	}
	return err
}

// MarshalText implements encoding.TextMarshaler.
func (b Bytes) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *Bytes) UnmarshalText(p []byte) error {
	v, err := ParseBytes(string(p))
	if err == nil {
		*b = v
	}
	return err
}

// MarshalText implements encoding.TextMarshaler.
func (r BitRate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *BitRate) UnmarshalText(b []byte) error {
	v, err := ParseBitRate(string(b))
	if err == nil {
		*r = v
	}
	return err
}

// MarshalText implements encoding.TextMarshaler.
func (f Fraction) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (f *Fraction) UnmarshalText(b []byte) error {
	v, err := ParseFraction(string(b))
	if err == nil {
		*f = v
	}
	return err
}

func scalar(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: want a scalar quantity", n.Line)
	}
	return n.Value, nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (t *Time) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n)
	if err != nil {
		return err
	}
	return t.UnmarshalText([]byte(s))
}

// MarshalYAML implements yaml.Marshaler.
func (t Time) MarshalYAML() (any, error) { return PlainScalar(t.String()), nil }

// UnmarshalYAML implements yaml.Unmarshaler.
func (b *Bytes) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n)
	if err != nil {
		return err
	}
	return b.UnmarshalText([]byte(s))
}

// MarshalYAML implements yaml.Marshaler.
func (b Bytes) MarshalYAML() (any, error) { return PlainScalar(b.String()), nil }

// UnmarshalYAML implements yaml.Unmarshaler.
func (r *BitRate) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n)
	if err != nil {
		return err
	}
	return r.UnmarshalText([]byte(s))
}

// MarshalYAML implements yaml.Marshaler.
func (r BitRate) MarshalYAML() (any, error) { return PlainScalar(r.String()), nil }

// UnmarshalYAML implements yaml.Unmarshaler.
func (f *Fraction) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n)
	if err != nil {
		return err
	}
	return f.UnmarshalText([]byte(s))
}

// MarshalYAML implements yaml.Marshaler.
func (f Fraction) MarshalYAML() (any, error) { return PlainScalar(f.String()), nil }

// PlainScalar returns a YAML scalar node that prints without quotes: "0" rather than
// `"0"`. Quantities are read back by their UnmarshalYAML, which takes the text as is.
func PlainScalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: s}
}
