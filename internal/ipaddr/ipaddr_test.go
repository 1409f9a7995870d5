package ipaddr

import (
	"net/netip"
	"slices"
	"testing"
)

func TestAddr(t *testing.T) {
	cases := []struct {
		in     string
		fam    Family
		text   string // RFC 5952 for IPv6
		multi  bool
		bitLen int
	}{
		{"10.0.1.5", IPv4, "10.0.1.5", false, 32},
		{"224.0.0.22", IPv4, "224.0.0.22", true, 32},
		{"239.255.255.250", IPv4, "239.255.255.250", true, 32},
		{"255.255.255.255", IPv4, "255.255.255.255", true, 32},
		{"240.0.0.1", IPv4, "240.0.0.1", false, 32},
		{"2001:DB8:0:0:0:0:0:1", IPv6, "2001:db8::1", false, 128},
		{"2001:db8:0:0:1:0:0:1", IPv6, "2001:db8::1:0:0:1", false, 128}, // the first longest run of zeros
		{"2001:0db8:0000:0001:0001:0001:0001:0001", IPv6, "2001:db8:0:1:1:1:1:1", false, 128},
		{"ff02::16", IPv6, "ff02::16", true, 128},
		{"fe80::ff00:1", IPv6, "fe80::ff00:1", false, 128},
		{"::ffff:10.0.0.1", IPv6, "::ffff:10.0.0.1", false, 128}, // IPv4-mapped stays IPv6
		{"::", IPv6, "::", false, 128},
	}
	for _, c := range cases {
		a, err := ParseAddr(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if a.Family() != c.fam || a.String() != c.text || a.IsMulticast() != c.multi || a.BitLen() != c.bitLen || !a.IsValid() {
			t.Errorf("%s: family %v text %q multicast %v bits %d; want %v %q %v %d", c.in, a.Family(), a, a.IsMulticast(), a.BitLen(), c.fam, c.text, c.multi, c.bitLen)
		}
		if got := string(a.AppendTo([]byte("x"))); got != "x"+c.text {
			t.Errorf("%s: AppendTo %q", c.in, got)
		}
		if back := FromNetip(a.Netip()); back != a {
			t.Errorf("%s: netip round trip %v", c.in, back)
		}
		if len(a.Bytes()) != c.bitLen/8 {
			t.Errorf("%s: %d bytes", c.in, len(a.Bytes()))
		}
	}
	v4 := From4([4]byte{10, 0, 0, 1})
	mapped := MustParse("::ffff:10.0.0.1")
	if v4 == mapped || v4.As16() != mapped.As16() || v4.As4() != [4]byte{10, 0, 0, 1} {
		t.Errorf("10.0.0.1 and ::ffff:10.0.0.1: same bytes, different families: %v %v", v4, mapped)
	}
	if (Addr{}).IsValid() || (Addr{}).AppendTo(nil) != nil || (Addr{}).Bytes() != nil {
		t.Error("the zero Addr is valid")
	}
	if _, err := ParseAddr("fe80::1%eth0"); err == nil {
		t.Error("a zone is accepted")
	}
	if n := testing.AllocsPerRun(100, func() { _ = From16([16]byte{1}).Is6() && From4([4]byte{1}).Is4() }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func TestCompare(t *testing.T) {
	in := []string{"2001:db8::2", "10.0.0.2", "::1", "2001:db8::1", "9.255.255.255", "10.0.0.10", "::ffff:1.2.3.4"}
	want := []string{"9.255.255.255", "10.0.0.2", "10.0.0.10", "::1", "::ffff:1.2.3.4", "2001:db8::1", "2001:db8::2"}
	var as []Addr
	for _, s := range in {
		as = append(as, MustParse(s))
	}
	slices.SortFunc(as, Addr.Compare)
	var got []string
	for _, a := range as {
		got = append(got, a.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("sorted %v, want %v", got, want)
	}
}

func TestMasked(t *testing.T) {
	for _, c := range []struct {
		in   string
		bits int
		want string
	}{
		{"10.1.2.3", 24, "10.1.2.0"},
		{"10.1.2.3", 20, "10.1.0.0"},
		{"10.1.2.3", 0, "0.0.0.0"},
		{"10.1.2.3", 40, "10.1.2.3"},
		{"2001:db8:1:2:3:4:5:6", 64, "2001:db8:1:2::"},
		{"2001:db8:1:2:3:4:5:6", 60, "2001:db8:1::"},
		{"2001:db8:1:2:3:4:5:6", 56, "2001:db8:1::"},
		{"2001:db8:1:ff:3:4:5:6", 60, "2001:db8:1:f0::"},
		{"2001:db8:1:2:3:4:5:6", 128, "2001:db8:1:2:3:4:5:6"},
	} {
		got := MustParse(c.in).Masked(c.bits)
		// netip computes the same prefix independently.
		ref := netip.PrefixFrom(netip.MustParseAddr(c.in), min(c.bits, netip.MustParseAddr(c.in).BitLen())).Masked().Addr()
		if got.String() != c.want || got.Netip() != ref {
			t.Errorf("%s/%d = %v, want %s (netip %v)", c.in, c.bits, got, c.want, ref)
		}
	}
}

func TestFamily(t *testing.T) {
	for _, s := range []string{"ipv4", "ipv6", "all"} {
		f, err := ParseFamily(s)
		if err != nil || f.String() != s {
			t.Errorf("%s: %v %v", s, f, err)
		}
	}
	if _, err := ParseFamily("IPv5"); err == nil {
		t.Error("IPv5 parsed")
	}
	if IPv4.Index() != 0 || IPv6.Index() != 1 || MustParse("::1").Family() != IPv6 {
		t.Error("indexes")
	}
}
