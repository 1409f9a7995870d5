package replay

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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

// A /24 of 17 endpoints on racks of 16 hosts: the group fits no rack, so it fills
// rack-p0-r0 and spills its 17th endpoint to the next rack (docs/model.md#host-mapping);
// a second /24 then belongs to rack-p0-r1 and takes the hosts after it.
func TestMapSubnetSpills(t *testing.T) {
	var eps []ipaddr.Addr
	for i := 1; i <= 17; i++ {
		eps = append(eps, ip(192, 168, 0, byte(i)))
	}
	eps = append(eps, ip(192, 168, 1, 1))
	m, err := MapHosts(MapSubnet, eps, defaultGrid, 24, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantHosts(t, m, defaultGrid, map[ipaddr.Addr]string{ip(192, 168, 0, 1): "host-p0-r0-h0", ip(192, 168, 0, 16): "host-p0-r0-h15",
		ip(192, 168, 0, 17): "host-p0-r1-h0", ip(192, 168, 1, 1): "host-p0-r1-h1"})
	if m.Groups != 2 || m.Split != 1 || m.Moved != 0 {
		t.Errorf("groups %d, split %d, moved %d; want 2, 1, 0", m.Groups, m.Split, m.Moved)
	}
	// A longer prefix splits the group into /28s that fit racks of their own.
	m, err = MapHosts(MapSubnet, eps, defaultGrid, 28, 0)
	if err != nil || m.Split != 0 {
		t.Errorf("--rack-prefix 28: %v, %d groups split", err, m.Split)
	}
}

// wantHosts checks that each endpoint maps to the named host.
func wantHosts(t *testing.T, m *HostMap, g HostGrid, want map[ipaddr.Addr]string) {
	t.Helper()
	for a, name := range want {
		if id, ok := m.Host(a); !ok || g.HostName(id) != name {
			t.Errorf("%v -> %s (%v), want %s", a, g.HostName(id), ok, name)
		}
	}
}

// The worked example of docs/model.md#host-mapping: 4 racks of 4 hosts, /24 groups
// of 3, 1, 2, 1, 2 and 3 endpoints. A to r0 (h0-h2), B to r1 (h0), C to r2 (h0, h1),
// D to r3 (h0); E belongs to r0, which has 1 free host: it goes whole to r1 (h1,
// h2), the next rack with 2 free; F (3) belongs to r1, which has 1 free host, and
// no rack has 3 (r0 1, r1 1, r2 2, r3 3): r3 takes it whole (h1-h3).
func TestMapSubnetWorkedExample(t *testing.T) {
	g := HostGrid{Pods: 1, RacksPerPod: 4, HostsPerRack: 4}
	sizes := []int{3, 1, 2, 1, 2, 3}
	var eps []ipaddr.Addr
	for grp, n := range sizes {
		for i := 1; i <= n; i++ {
			eps = append(eps, ip(10, 0, byte(grp), byte(i)))
		}
	}
	m, err := MapHosts(MapSubnet, eps, g, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"host-p0-r0-h0", "host-p0-r0-h1", "host-p0-r0-h2", // A
		"host-p0-r1-h0",                  // B
		"host-p0-r2-h0", "host-p0-r2-h1", // C
		"host-p0-r3-h0",                  // D
		"host-p0-r1-h1", "host-p0-r1-h2", // E, moved whole to r1
		"host-p0-r3-h1", "host-p0-r3-h2", "host-p0-r3-h3", // F, moved whole to r3
	}
	for i, a := range eps {
		if id, _ := m.Host(a); g.HostName(id) != want[i] {
			t.Errorf("%v -> %s, want %s", a, g.HostName(id), want[i])
		}
	}
	if m.Moved != 2 || m.Split != 0 {
		t.Errorf("moved %d, split %d; want 2 and 0", m.Moved, m.Split)
	}
	// One more endpoint in F's /24: 4 endpoints, more than any rack's free hosts
	// (r0 1, r1 1, r2 2, r3 3): split over r1 (h3), r2 (h2, h3) and r3 (h1).
	m, err = MapHosts(MapSubnet, append(eps, ip(10, 0, 5, 4)), g, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantHosts(t, m, g, map[ipaddr.Addr]string{ip(10, 0, 5, 1): "host-p0-r1-h3", ip(10, 0, 5, 2): "host-p0-r2-h2",
		ip(10, 0, 5, 3): "host-p0-r2-h3", ip(10, 0, 5, 4): "host-p0-r3-h1"})
	if m.Split != 1 {
		t.Errorf("split %d groups, want 1", m.Split)
	}
}

// The subnet mapping never fails while the endpoints fit in the hosts, never puts
// two endpoints on one host, and, when no rack would receive more endpoints than it
// has hosts under the rule before groups could move (group i to rack i mod racks,
// hosts in order: oldSubnet below), gives exactly that rule's hosts.
func TestMapSubnetProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		g := HostGrid{Pods: 1 + r.IntN(2), RacksPerPod: 1 + r.IntN(4), HostsPerRack: 1 + r.IntN(6)}
		n := 1 + r.IntN(g.Hosts()+2)
		seen := map[ipaddr.Addr]bool{}
		var eps []ipaddr.Addr
		for len(eps) < n {
			a := ip(10, 0, byte(r.IntN(6)), byte(1+r.IntN(8)))
			if !seen[a] {
				seen[a] = true
				eps = append(eps, a)
			}
			if len(seen) == 48 {
				break
			}
		}
		m, err := MapHosts(MapSubnet, eps, g, 24, 0)
		if len(eps) > g.Hosts() {
			if !errors.Is(err, ErrHostMap) {
				t.Fatalf("%v: %d endpoints on %d hosts: err %v", g, len(eps), g.Hosts(), err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %d endpoints on %d hosts: %v", g, len(eps), g.Hosts(), err)
		}
		hosts := map[int32]ipaddr.Addr{}
		for _, a := range eps {
			id, ok := m.Host(a)
			if other, dup := hosts[id]; !ok || dup {
				t.Fatalf("%v: %v on host %d (%v), shared with %v", g, a, id, ok, other)
			}
			hosts[id] = a
		}
		if old, ok := oldSubnet(eps, g); ok {
			for a, id := range old {
				if got, _ := m.Host(a); got != id {
					t.Fatalf("%v: %v on host %d, the rule before moves gives %d", g, a, got, id)
				}
			}
		}
	}
}

// oldSubnet is the subnet rule before groups could move or split, written again
// here: /24 group i to rack i mod racks, its endpoints on the rack's hosts in order
// after earlier groups; ok is false when a rack would get more endpoints than hosts.
func oldSubnet(eps []ipaddr.Addr, g HostGrid) (map[ipaddr.Addr]int32, bool) {
	sorted := slices.Clone(eps)
	slices.SortFunc(sorted, ipaddr.Addr.Compare)
	out := map[ipaddr.Addr]int32{}
	used := make([]int, g.Racks())
	group := -1
	var prev [4]byte
	for _, a := range sorted {
		b := a.As4()
		if group < 0 || [3]byte(b[:3]) != [3]byte(prev[:3]) {
			group++
		}
		prev = b
		rack := group % g.Racks()
		if used[rack] == g.HostsPerRack {
			return nil, false
		}
		out[a] = int32(rack*g.HostsPerRack + used[rack])
		used[rack]++
	}
	return out, true
}

// More endpoints than hosts is the only failure: the message says how many of each
// and what to change.
func TestMapSubnetTooManyEndpoints(t *testing.T) {
	var eps []ipaddr.Addr
	for i := 0; i < 129; i++ {
		eps = append(eps, ip(192, 168, byte(i/100), byte(1+i%100)))
	}
	for _, mode := range []string{MapSubnet, MapSpread} {
		_, err := MapHosts(mode, eps, defaultGrid, 24, 0)
		if !errors.Is(err, ErrHostMap) {
			t.Fatalf("%s: err = %v, want ErrHostMap", mode, err)
		}
		for _, frag := range []string{"129 endpoints", "128 hosts in 8 racks", "--hosts hash", "HostsPerRack"} {
			if !strings.Contains(err.Error(), frag) {
				t.Errorf("%s: error %q lacks %q", mode, err, frag)
			}
		}
	}
	if _, err := MapHosts(MapSubnet, eps[:128], defaultGrid, 24, 0); err != nil {
		t.Errorf("128 endpoints on 128 hosts: %v", err)
	}
}

// --hosts spread: endpoints in numeric order, round-robin over the racks, each on
// its rack's first free host; with racks of unequal sizes a full rack is skipped.
func TestMapSpread(t *testing.T) {
	var eps []ipaddr.Addr
	for i := 1; i <= 10; i++ {
		eps = append(eps, ip(192, 168, 0, byte(i)))
	}
	m, err := MapHosts(MapSpread, eps, defaultGrid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range eps {
		want := fmt.Sprintf("host-p%d-r%d-h%d", (i%8)/4, i%4, i/8)
		if id, _ := m.Host(a); defaultGrid.HostName(id) != want {
			t.Errorf("%v -> %s, want %s", a, defaultGrid.HostName(id), want)
		}
	}
	racks := []Rack{{Name: "a", Hosts: []int32{0}}, {Name: "b", Hosts: []int32{1, 2, 3}}}
	m, err = MapRacks(MapSpread, eps[:4], racks, defaultGrid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int32{0, 1, 2, 3} {
		if id, _ := m.Host(eps[i]); id != want {
			t.Errorf("unequal racks: %v -> host %d, want %d", eps[i], id, want)
		}
	}
}

// A mapping that leaves the fabric unused says so and names the fixes; one that
// spreads endpoints does not.
func TestHostMapUnused(t *testing.T) {
	lan := []ipaddr.Addr{ip(192, 168, 0, 1), ip(192, 168, 0, 2), ip(192, 168, 0, 9)}
	m, err := MapHosts(MapSubnet, lan, defaultGrid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := m.Unused()
	for _, frag := range []string{"all 3 endpoints to rack rack-p0-r0", "--hosts spread", "--rack-prefix 32", "CSV"} {
		if !strings.Contains(w, frag) {
			t.Errorf("warning %q lacks %q", w, frag)
		}
	}
	for _, c := range []struct {
		mode   string
		prefix int
	}{{MapSpread, 0}, {MapSubnet, 32}} {
		mode, prefix := c.mode, c.prefix
		m, err := MapHosts(mode, lan, defaultGrid, prefix, 0)
		if err != nil {
			t.Fatal(err)
		}
		if w := m.Unused(); w != "" {
			t.Errorf("%s /%d: %q", mode, prefix, w)
		}
		if eps, _ := m.PerRack(); eps[0] != 1 || eps[1] != 1 || eps[2] != 1 {
			t.Errorf("%s /%d: endpoints per rack %v, want one on each of the first three", mode, prefix, eps)
		}
	}
	dir := t.TempDir()
	csv := filepath.Join(dir, "one.csv")
	os.WriteFile(csv, []byte("192.168.0.0/16,host-p0-r0-h3\n"), 0o644)
	m, err = MapHosts(csv, lan, defaultGrid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if w := m.Unused(); !strings.Contains(w, "all 3 endpoints to one host") || !strings.Contains(w, "intra-host") {
		t.Errorf("one host: %q", w)
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
	for i := 1; i <= 129; i++ {
		eps = append(eps, ipaddr.From16([16]byte{0x20, 0x01, 0x0d, 0xb8, 14: byte(i >> 8), 15: byte(i)}))
	}
	_, err := MapHosts(MapSubnet, eps, defaultGrid, 0, 0)
	if err == nil || !strings.Contains(err.Error(), "129 endpoints in 1 /64 subnet but") {
		t.Fatalf("err = %v", err)
	}
	_, err = MapHosts(MapSubnet, append(eps, ip(10, 0, 0, 1)), defaultGrid, 0, 0)
	if err == nil || !strings.Contains(err.Error(), "subnets (IPv4 /24, IPv6 /64)") {
		t.Fatalf("mixed: err = %v", err)
	}
	// 17 endpoints of one /64 spill from rack-p0-r0 to rack-p0-r1.
	m, err := MapHosts(MapSubnet, eps[:17], defaultGrid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := m.Host(eps[16]); defaultGrid.HostName(id) != "host-p0-r1-h0" {
		t.Errorf("17th endpoint of a /64 on %s, want host-p0-r1-h0", defaultGrid.HostName(id))
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
