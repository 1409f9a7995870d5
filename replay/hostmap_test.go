package replay

import (
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

func ip(a, b, c, d byte) ipaddr.Addr { return ipaddr.From4([4]byte{a, b, c, d}) }

var defaultGrid = HostGrid{Pods: 2, RacksPerPod: 4, HostsPerRack: 16}

func TestHostNames(t *testing.T) {
	g := defaultGrid
	cases := map[int32]string{0: "host-p0-r0-h0", 21: "host-p0-r1-h5", 64: "host-p1-r0-h0", 127: "host-p1-r3-h15"}
	for id, name := range cases {
		if got := g.HostName(id); got != name {
			t.Errorf("HostName(%d) = %q, want %q", id, got, name)
		}
		if back, ok := g.HostID(name); !ok || back != id {
			t.Errorf("HostID(%q) = %d, %v; want %d", name, back, ok, id)
		}
	}
	for _, bad := range []string{"host-p2-r0-h0", "host-p0-r4-h0", "host-p0-r0-h16", "rack-p0-r0", "host-p0-r0-h01"} {
		if _, ok := g.HostID(bad); ok {
			t.Errorf("HostID(%q) accepted", bad)
		}
	}
}

func TestMapSubnet(t *testing.T) {
	eps := []ipaddr.Addr{
		ip(10, 0, 1, 7), ip(10, 0, 0, 2), ip(10, 0, 0, 1), // two /24s, unsorted
		ip(10, 0, 2, 1), ip(10, 0, 0, 1), // duplicate
	}
	m, err := MapHosts("", eps, defaultGrid, 24, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[ipaddr.Addr]string{
		ip(10, 0, 0, 1): "host-p0-r0-h0",
		ip(10, 0, 0, 2): "host-p0-r0-h1",
		ip(10, 0, 1, 7): "host-p0-r1-h0",
		ip(10, 0, 2, 1): "host-p0-r2-h0",
	}
	if m.Len() != len(want) {
		t.Fatalf("mapped %d endpoints, want %d", m.Len(), len(want))
	}
	for a, name := range want {
		id, ok := m.Host(a)
		if !ok || defaultGrid.HostName(id) != name {
			t.Errorf("%v -> %s, want %s", a, defaultGrid.HostName(id), name)
		}
	}
}

func TestMapSubnetWrapsRacks(t *testing.T) {
	// 9 groups on 8 racks: group 8 shares rack 0 with group 0 and continues its hosts.
	var eps []ipaddr.Addr
	for g := 0; g < 9; g++ {
		eps = append(eps, ip(10, 0, byte(g), 1), ip(10, 0, byte(g), 2))
	}
	m, err := MapHosts(MapSubnet, eps, defaultGrid, 24, 0)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := m.Host(ip(10, 0, 8, 1)); defaultGrid.HostName(id) != "host-p0-r0-h2" {
		t.Errorf("group 8 first endpoint on %s, want host-p0-r0-h2", defaultGrid.HostName(id))
	}
	if id, _ := m.Host(ip(10, 0, 4, 2)); defaultGrid.HostName(id) != "host-p1-r0-h1" {
		t.Errorf("group 4 second endpoint on %s, want host-p1-r0-h1", defaultGrid.HostName(id))
	}
}

func TestMapSubnetTooManyEndpoints(t *testing.T) {
	var eps []ipaddr.Addr
	for i := 1; i <= 17; i++ {
		eps = append(eps, ip(192, 168, 0, byte(i)))
	}
	_, err := MapHosts(MapSubnet, eps, defaultGrid, 24, 0)
	if !errors.Is(err, ErrHostMap) {
		t.Fatalf("err = %v, want ErrHostMap", err)
	}
	for _, frag := range []string{"17 endpoints", "rack-p0-r0 would receive 17 endpoints but has 16 hosts", "128 hosts", "--hosts hash", "HostsPerRack"} {
		if !strings.Contains(err.Error(), frag) {
			t.Errorf("error %q lacks %q", err, frag)
		}
	}
	// A longer prefix splits the group and fits.
	if _, err := MapHosts(MapSubnet, eps, defaultGrid, 28, 0); err != nil {
		t.Errorf("--rack-prefix 28: %v", err)
	}
}

func TestMapHash(t *testing.T) {
	var eps []ipaddr.Addr
	for i := 0; i < 1000; i++ {
		eps = append(eps, ip(10, byte(i>>8), byte(i), 9))
	}
	m, err := MapHosts(MapHash, eps, defaultGrid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]int{}
	for _, a := range eps {
		id, ok := m.Host(a)
		if !ok || id < 0 || int(id) >= defaultGrid.Hosts() {
			t.Fatalf("%v -> %d, %v", a, id, ok)
		}
		seen[id]++
	}
	if len(seen) < 100 {
		t.Errorf("1000 endpoints hashed onto only %d of 128 hosts", len(seen))
	}
	m2, _ := MapHosts(MapHash, eps, defaultGrid, 0, 0)
	for _, a := range eps {
		x, _ := m.Host(a)
		y, _ := m2.Host(a)
		if x != y {
			t.Fatal("hash mapping is not deterministic")
		}
	}
}

func TestMapCSV(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hosts.csv")
	os.WriteFile(path, []byte("cidr,host\n10.0.0.0/8,host-p0-r0-h0\n10.1.0.0/16,host-p1-r3-h15\n10.1.2.3,host-p0-r2-h4\n"), 0o644)
	m, err := MapHosts(path, []ipaddr.Addr{ip(10, 9, 9, 9), ip(10, 1, 0, 1), ip(10, 1, 2, 3)}, defaultGrid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[ipaddr.Addr]string{ip(10, 9, 9, 9): "host-p0-r0-h0", ip(10, 1, 0, 1): "host-p1-r3-h15", ip(10, 1, 2, 3): "host-p0-r2-h4"}
	for a, name := range want {
		if id, _ := m.Host(a); defaultGrid.HostName(id) != name {
			t.Errorf("%v -> %s, want %s (longest prefix)", a, defaultGrid.HostName(id), name)
		}
	}
	if _, err := MapHosts(path, []ipaddr.Addr{ip(11, 0, 0, 1)}, defaultGrid, 0, 0); err == nil || !strings.Contains(err.Error(), "11.0.0.1") {
		t.Errorf("unmatched endpoint: err = %v", err)
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("10.0.0.0/8,host-p9-r0-h0\n"), 0o644)
	if _, err := MapHosts(bad, nil, defaultGrid, 0, 0); err == nil || !strings.Contains(err.Error(), "bad.csv:1") {
		t.Errorf("unknown host: err = %v", err)
	}
	if _, err := MapHosts(filepath.Join(dir, "missing.csv"), nil, defaultGrid, 0, 0); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Errorf("missing file: err = %v", err)
	}
}

func ip6(s string) ipaddr.Addr { return ipaddr.MustParse(s) }

// TestMapSubnetMixedFamilies: IPv4 groups (/24) first, then IPv6 groups (/64), each
// sorted numerically, share the racks in turn (docs/model.md#host-mapping), with
// hosts taken in order within a rack across both families. Expected hosts worked out
// by hand from that rule.
func TestMapSubnetMixedFamilies(t *testing.T) {
	eps := []ipaddr.Addr{
		ip6("2001:db8:0:2::1"), ip6("2001:db8:0:1::9"), ip6("2001:db8:0:1::1"), // two /64s, unsorted
		ip(10, 0, 1, 1), ip(10, 0, 0, 2), ip(10, 0, 0, 1), // two /24s
		ip6("2001:db8:0:1:ffff::1"),                                                               // same /64 as ::1 and ::9, sorts after them
		ip6("::ffff:10.0.0.1"),                                                                    // IPv4-mapped: an IPv6 endpoint in ::/64, the first IPv6 group
		ip6("fd00::1"), ip6("fd00:0:0:ff::1"), ip6("fe80::1"), ip6("fd00:1::1"), ip6("fd00:2::1"), // 5 more /64s
	}
	m, err := MapHosts(MapSubnet, eps, defaultGrid, 24, 64)
	if err != nil {
		t.Fatal(err)
	}
	want := map[ipaddr.Addr]string{
		ip(10, 0, 0, 1):             "host-p0-r0-h0", // group 0: 10.0.0.0/24
		ip(10, 0, 0, 2):             "host-p0-r0-h1",
		ip(10, 0, 1, 1):             "host-p0-r1-h0", // group 1: 10.0.1.0/24
		ip6("::ffff:10.0.0.1"):      "host-p0-r2-h0", // group 2: ::/64
		ip6("2001:db8:0:1::1"):      "host-p0-r3-h0", // group 3: 2001:db8:0:1::/64
		ip6("2001:db8:0:1::9"):      "host-p0-r3-h1",
		ip6("2001:db8:0:1:ffff::1"): "host-p0-r3-h2",
		ip6("2001:db8:0:2::1"):      "host-p1-r0-h0", // group 4
		ip6("fd00::1"):              "host-p1-r1-h0", // group 5
		ip6("fd00:0:0:ff::1"):       "host-p1-r2-h0", // group 6
		ip6("fd00:1::1"):            "host-p1-r3-h0", // group 7
		ip6("fd00:2::1"):            "host-p0-r0-h2", // group 8: rack 0 again, after the IPv4 hosts
		ip6("fe80::1"):              "host-p0-r1-h1", // group 9: rack 1, after 10.0.1.1
	}
	if m.Len() != len(want) {
		t.Fatalf("mapped %d endpoints, want %d", m.Len(), len(want))
	}
	for a, name := range want {
		if id, ok := m.Host(a); !ok || defaultGrid.HostName(id) != name {
			t.Errorf("%v -> %s (%v), want %s", a, defaultGrid.HostName(id), ok, name)
		}
	}
	if _, ok := m.Host(ip6("::ffff:10.0.0.2")); ok {
		t.Error("::ffff:10.0.0.2 mapped though only its IPv4 twin is an endpoint")
	}
	addrs, hosts := m.Endpoints()
	if len(addrs) != len(want) || addrs[0] != ip(10, 0, 0, 1) || addrs[3] != ip6("::ffff:10.0.0.1") || hosts[3] != 32 {
		t.Errorf("Endpoints() = %v %v: IPv4 first, then IPv6, numerically", addrs, hosts)
	}
	// A shorter IPv6 prefix merges the 2001:db8:0:1::/64 and 2001:db8:0:2::/64 groups.
	m, err = MapHosts(MapSubnet, eps, defaultGrid, 24, 32)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := m.Host(ip6("2001:db8:0:2::1")); defaultGrid.HostName(id) != "host-p0-r3-h3" {
		t.Errorf("--rack-prefix6 32: 2001:db8:0:2::1 -> %s, want host-p0-r3-h3", defaultGrid.HostName(id))
	}
}

func TestMapSubnetIPv6Errors(t *testing.T) {
	var eps []ipaddr.Addr
	for i := 1; i <= 17; i++ {
		eps = append(eps, ipaddr.From16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(i)}))
	}
	_, err := MapHosts(MapSubnet, eps, defaultGrid, 0, 0)
	if err == nil || !strings.Contains(err.Error(), "17 endpoints in 1 /64 subnets") || !strings.Contains(err.Error(), "--rack-prefix6") {
		t.Fatalf("err = %v", err)
	}
	_, err = MapHosts(MapSubnet, append(eps, ip(10, 0, 0, 1)), defaultGrid, 0, 0)
	if err == nil || !strings.Contains(err.Error(), "subnets (IPv4 /24, IPv6 /64)") {
		t.Fatalf("mixed: err = %v", err)
	}
	if _, err := MapHosts(MapSubnet, eps, defaultGrid, 0, 124); err != nil {
		t.Errorf("--rack-prefix6 124 splits the group: %v", err)
	}
	for _, bad := range []int{-1, 129} {
		if _, err := MapHosts(MapSubnet, eps, defaultGrid, 0, bad); err == nil || !strings.Contains(err.Error(), "--rack-prefix6") {
			t.Errorf("--rack-prefix6 %d: err = %v", bad, err)
		}
	}
}

// TestMapHashIPv6: an IPv6 endpoint hashes its 16 bytes (crc32 of the address in
// network order, mod the host count).
func TestMapHashIPv6(t *testing.T) {
	a, v4 := ip6("2001:db8::1"), ip(10, 0, 0, 1)
	m, err := MapHosts(MapHash, []ipaddr.Addr{a, v4, ip6("::ffff:10.0.0.1")}, defaultGrid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := a.As16()
	if id, _ := m.Host(a); id != int32(crc32.ChecksumIEEE(b[:])%128) {
		t.Errorf("2001:db8::1 -> %d, want crc32 of its 16 bytes mod 128 = %d", id, crc32.ChecksumIEEE(b[:])%128)
	}
	if id, _ := m.Host(v4); id != int32(crc32.ChecksumIEEE([]byte{10, 0, 0, 1})%128) {
		t.Errorf("10.0.0.1 -> %d, want crc32 of its 4 bytes", id)
	}
	if m.Len() != 3 {
		t.Errorf("%d endpoints, want 3 (10.0.0.1 and ::ffff:10.0.0.1 are two)", m.Len())
	}
}

// TestMapCSVIPv6: a CSV host map takes IPv6 CIDRs and addresses; an endpoint only
// matches prefixes of its own family.
func TestMapCSVIPv6(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts.csv")
	os.WriteFile(path, []byte("cidr,host\n2001:db8::/32,host-p0-r0-h0\n2001:db8:1::/48,host-p1-r0-h3\n2001:db8:1::7,host-p0-r1-h1\n"+
		"0.0.0.0/0,host-p1-r3-h15\n::ffff:0:0/96,host-p0-r3-h3\n"), 0o644)
	m, err := MapHosts(path, []ipaddr.Addr{ip6("2001:db8:9::1"), ip6("2001:db8:1::1"), ip6("2001:db8:1::7"), ip(10, 0, 0, 1), ip6("::ffff:10.0.0.1")}, defaultGrid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for a, name := range map[ipaddr.Addr]string{ip6("2001:db8:9::1"): "host-p0-r0-h0", ip6("2001:db8:1::1"): "host-p1-r0-h3",
		ip6("2001:db8:1::7"): "host-p0-r1-h1", ip(10, 0, 0, 1): "host-p1-r3-h15", ip6("::ffff:10.0.0.1"): "host-p0-r3-h3"} {
		if id, _ := m.Host(a); defaultGrid.HostName(id) != name {
			t.Errorf("%v -> %s, want %s", a, defaultGrid.HostName(id), name)
		}
	}
	if _, err := MapHosts(path, []ipaddr.Addr{ip6("fd00::1")}, defaultGrid, 0, 0); err == nil || !strings.Contains(err.Error(), "fd00::1") {
		t.Errorf("an IPv6 endpoint matched by an IPv4 line: err = %v", err)
	}
	bad := filepath.Join(t.TempDir(), "zone.csv")
	os.WriteFile(bad, []byte("fe80::1%eth0,host-p0-r0-h0\n"), 0o644)
	if _, err := MapHosts(bad, nil, defaultGrid, 0, 0); err == nil || !strings.Contains(err.Error(), "zone.csv:1") {
		t.Errorf("zoned address: err = %v", err)
	}
}
