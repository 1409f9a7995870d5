package ecmp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Method and LoadBalancing work as command-line flag values.
var (
	_ pflag.Value = (*Method)(nil)
	_ pflag.Value = (*LoadBalancing)(nil)
)

func TestMethodNames(t *testing.T) {
	want := []string{"crc32", "crc32WithSalt", "crc16", "crc16Ccitt", "xor16", "toeplitz"}
	if len(Methods()) != len(want) {
		t.Fatalf("Methods() = %v", Methods())
	}
	for i, m := range Methods() {
		if m.String() != want[i] {
			t.Errorf("method %d String = %q, want %q", i, m, want[i])
		}
		for _, s := range []string{want[i], strings.ToUpper(want[i])} {
			if p, err := ParseMethod(s); err != nil || p != m {
				t.Errorf("ParseMethod(%q) = %v, %v", s, p, err)
			}
		}
		b, err := m.MarshalText()
		if err != nil || string(b) != want[i] {
			t.Errorf("MarshalText = %q, %v", b, err)
		}
		var u Method
		if err := u.Set(want[i]); err != nil || u != m || u.Type() == "" {
			t.Errorf("Set(%q) = %v, %v", want[i], u, err)
		}
	}
	if !CRC32WithSalt.Salted() || CRC32.Salted() || Method(6).Valid() {
		t.Error("Salted/Valid wrong")
	}
	_, err := ParseMethod("crc64")
	if !errors.Is(err, ErrUnknownMethod) || !strings.Contains(err.Error(), strings.Join(want, ", ")) ||
		!strings.Contains(err.Error(), `"crc64"`) {
		t.Errorf("ParseMethod(crc64) error %q does not name the input and the valid methods", err)
	}
	if _, err := Method(9).MarshalText(); err == nil {
		t.Error("MarshalText of an invalid method succeeded")
	}
}

func TestLoadBalancingNames(t *testing.T) {
	for _, c := range []struct {
		s string
		l LoadBalancing
	}{{"none", None}, {"flowlet", Flowlet}, {"Flowlet", Flowlet}} {
		l, err := ParseLoadBalancing(c.s)
		if err != nil || l != c.l {
			t.Errorf("ParseLoadBalancing(%q) = %v, %v", c.s, l, err)
		}
	}
	if None.String() != "none" || Flowlet.String() != "flowlet" {
		t.Error("String wrong")
	}
	fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	hash, lb := DefaultMethod, None
	fs.Var(&hash, "hash", "ECMP hash method")
	fs.Var(&lb, "lb", "load balancing")
	if err := fs.Parse([]string{"--hash", "toeplitz", "--lb", "flowlet"}); err != nil || hash != Toeplitz || lb != Flowlet {
		t.Errorf("pflag: %v %v %v", hash, lb, err)
	}
	var l LoadBalancing
	if err := l.Set("ecmp"); !errors.Is(err, ErrUnknownLoadBalancing) || !strings.Contains(err.Error(), "none, flowlet") {
		t.Errorf("Set(ecmp) error %v", err)
	}
}

func TestConfigYAMLAndJSON(t *testing.T) {
	c := DefaultConfig()
	c.Method, c.LoadBalancing, c.Salt, c.FlowTableSize = CRC16CCITT, Flowlet, 42, 4096
	y, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"EcmpHashMethod: crc16Ccitt", "LoadBalancingMethod: flowlet", "Gap: 100us",
		"HashSalt: 42", "FlowTableSize: 4096", "PreferUnpaused: true"} {
		if !strings.Contains(string(y), want) {
			t.Errorf("YAML lacks %q:\n%s", want, y)
		}
	}
	var back Config
	if err := yaml.Unmarshal(y, &back); err != nil || back != c {
		t.Errorf("YAML round trip: %+v, %v", back, err)
	}
	in := "EcmpHashMethod: toeplitz\nLoadBalancingMethod: none\nGap: 50us\n"
	d := DefaultConfig()
	if err := yaml.Unmarshal([]byte(in), &d); err != nil || d.Method != Toeplitz || d.Gap != 50*units.Microsecond || !d.PreferUnpaused {
		t.Errorf("YAML over defaults: %+v, %v", d, err)
	}
	if err := yaml.Unmarshal([]byte("EcmpHashMethod: md5\n"), &d); err == nil || !strings.Contains(err.Error(), "crc32WithSalt") {
		t.Errorf("bad YAML method: %v", err)
	}
	j, err := json.Marshal(c)
	if err != nil || !strings.Contains(string(j), `"EcmpHashMethod":"crc16Ccitt"`) {
		t.Errorf("JSON %s, %v", j, err)
	}
	var jb Config
	if err := json.Unmarshal(j, &jb); err != nil || jb != c {
		t.Errorf("JSON round trip: %+v, %v", jb, err)
	}
}

// FuzzHash cross-checks every method against the bit-by-bit references.
func FuzzHash(f *testing.F) {
	f.Add([]byte("0123456789abc"), uint32(0))
	f.Add(make([]byte, 13), uint32(0xFFFFFFFF))
	f.Add([]byte("0123456789abcdef0123456789abcdef01234"), uint32(7)) // 37 bytes: an IPv6 key
	f.Fuzz(func(t *testing.T, b []byte, salt uint32) {
		n := KeyLen
		if len(b) > KeyLen {
			n = KeyLen6
		}
		kb := make([]byte, n) // b zero-padded or cut to the key's length
		copy(kb, b)
		k := keyOf(kb, n == KeyLen6)
		for _, m := range AllMethods {
			if got, want := m.Hash(salt, &k), naiveMethod(m, salt, k); got != want {
				t.Fatalf("%v.Hash(%#x, % x) = %#x, reference %#x", m, salt, k.Bytes(), got, want)
			}
		}
	})
}
