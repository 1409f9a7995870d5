package replay

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func ip(a, b, c, d byte) [4]byte { return [4]byte{a, b, c, d} }

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
	eps := [][4]byte{
		ip(10, 0, 1, 7), ip(10, 0, 0, 2), ip(10, 0, 0, 1), // two /24s, unsorted
		ip(10, 0, 2, 1), ip(10, 0, 0, 1), // duplicate
	}
	m, err := MapHosts("", eps, defaultGrid, 24)
	if err != nil {
		t.Fatal(err)
	}
	want := map[[4]byte]string{
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
	var eps [][4]byte
	for g := 0; g < 9; g++ {
		eps = append(eps, ip(10, 0, byte(g), 1), ip(10, 0, byte(g), 2))
	}
	m, err := MapHosts(MapSubnet, eps, defaultGrid, 24)
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
	var eps [][4]byte
	for i := 1; i <= 17; i++ {
		eps = append(eps, ip(192, 168, 0, byte(i)))
	}
	_, err := MapHosts(MapSubnet, eps, defaultGrid, 24)
	if !errors.Is(err, ErrHostMap) {
		t.Fatalf("err = %v, want ErrHostMap", err)
	}
	for _, frag := range []string{"17 endpoints", "rack-p0-r0 would receive 17 endpoints but has 16 hosts", "128 hosts", "--hosts hash", "HostsPerRack"} {
		if !strings.Contains(err.Error(), frag) {
			t.Errorf("error %q lacks %q", err, frag)
		}
	}
	// A longer prefix splits the group and fits.
	if _, err := MapHosts(MapSubnet, eps, defaultGrid, 28); err != nil {
		t.Errorf("--rack-prefix 28: %v", err)
	}
}

func TestMapHash(t *testing.T) {
	var eps [][4]byte
	for i := 0; i < 1000; i++ {
		eps = append(eps, ip(10, byte(i>>8), byte(i), 9))
	}
	m, err := MapHosts(MapHash, eps, defaultGrid, 0)
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
	m2, _ := MapHosts(MapHash, eps, defaultGrid, 0)
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
	m, err := MapHosts(path, [][4]byte{ip(10, 9, 9, 9), ip(10, 1, 0, 1), ip(10, 1, 2, 3)}, defaultGrid, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[[4]byte]string{ip(10, 9, 9, 9): "host-p0-r0-h0", ip(10, 1, 0, 1): "host-p1-r3-h15", ip(10, 1, 2, 3): "host-p0-r2-h4"}
	for a, name := range want {
		if id, _ := m.Host(a); defaultGrid.HostName(id) != name {
			t.Errorf("%v -> %s, want %s (longest prefix)", a, defaultGrid.HostName(id), name)
		}
	}
	if _, err := MapHosts(path, [][4]byte{ip(11, 0, 0, 1)}, defaultGrid, 0); err == nil || !strings.Contains(err.Error(), "11.0.0.1") {
		t.Errorf("unmatched endpoint: err = %v", err)
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("10.0.0.0/8,host-p9-r0-h0\n"), 0o644)
	if _, err := MapHosts(bad, nil, defaultGrid, 0); err == nil || !strings.Contains(err.Error(), "bad.csv:1") {
		t.Errorf("unknown host: err = %v", err)
	}
	if _, err := MapHosts(filepath.Join(dir, "missing.csv"), nil, defaultGrid, 0); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Errorf("missing file: err = %v", err)
	}
}
