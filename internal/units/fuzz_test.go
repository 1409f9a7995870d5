package units

import (
	"errors"
	"testing"
)

// FuzzParse: every parser either rejects its input with ErrSyntax or returns a value
// whose printed spelling parses back to the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1us", "1.5ms", "0", "32MiB", "400KB", "9000", "100Gbps", "25G", "40%", "0.125", "-1us", "1e3ns", "1e400s", "9223372036854775807ps", "0.1%", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseTime(s); err == nil {
			if back, err := ParseTime(v.String()); err != nil || back != v {
				t.Fatalf("Time %q -> %d -> %q -> %d, %v", s, int64(v), v.String(), int64(back), err)
			}
		} else if !errors.Is(err, ErrSyntax) {
			t.Fatalf("ParseTime(%q) error %v does not wrap ErrSyntax", s, err)
		}
		if v, err := ParseBytes(s); err == nil {
			if back, err := ParseBytes(v.String()); err != nil || back != v {
				t.Fatalf("Bytes %q -> %d -> %q -> %d, %v", s, int64(v), v.String(), int64(back), err)
			}
		} else if !errors.Is(err, ErrSyntax) {
			t.Fatalf("ParseBytes(%q) error %v does not wrap ErrSyntax", s, err)
		}
		if v, err := ParseBitRate(s); err == nil {
			if back, err := ParseBitRate(v.String()); err != nil || back != v {
				t.Fatalf("BitRate %q -> %d -> %q -> %d, %v", s, int64(v), v.String(), int64(back), err)
			}
		} else if !errors.Is(err, ErrSyntax) {
			t.Fatalf("ParseBitRate(%q) error %v does not wrap ErrSyntax", s, err)
		}
		if v, err := ParseFraction(s); err == nil {
			if back, err := ParseFraction(v.String()); err != nil || back != v {
				t.Fatalf("Fraction %q -> %v -> %q -> %v, %v", s, float64(v), v.String(), float64(back), err)
			}
		} else if !errors.Is(err, ErrSyntax) {
			t.Fatalf("ParseFraction(%q) error %v does not wrap ErrSyntax", s, err)
		}
	})
}
