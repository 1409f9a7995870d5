package replay

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/netip"
	"os"
	"slices"
	"strings"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// HostGrid is the shape of the fabric's host layer: Pods x RacksPerPod racks of
// HostsPerRack hosts. Host IDs are dense: id = (pod*RacksPerPod + rack)*HostsPerRack + h,
// which is also name order (pod, then rack, then host).
type HostGrid struct {
	Pods, RacksPerPod, HostsPerRack int
}

// Racks is the number of racks.
func (g HostGrid) Racks() int { return g.Pods * g.RacksPerPod }

// Hosts is the number of hosts.
func (g HostGrid) Hosts() int { return g.Racks() * g.HostsPerRack }

// HostName names host id as docs/model.md#clos-builder does: host-p0-r1-h5.
func (g HostGrid) HostName(id int32) string {
	h := int(id) % g.HostsPerRack
	r := int(id) / g.HostsPerRack
	return fmt.Sprintf("host-p%d-r%d-h%d", r/g.RacksPerPod, r%g.RacksPerPod, h)
}

// HostID parses a docs/model.md#clos-builder host name; ok is false when it is not one of this grid.
func (g HostGrid) HostID(name string) (int32, bool) {
	var p, r, h int
	if n, err := fmt.Sscanf(name, "host-p%d-r%d-h%d", &p, &r, &h); err != nil || n != 3 {
		return 0, false
	}
	if g.HostName(int32((p*g.RacksPerPod+r)*g.HostsPerRack+h)) != name ||
		p < 0 || p >= g.Pods || r < 0 || r >= g.RacksPerPod || h < 0 || h >= g.HostsPerRack {
		return 0, false
	}
	return int32((p*g.RacksPerPod+r)*g.HostsPerRack + h), true
}

// Rack is one rack of a fabric as the host mapping sees it: its name and its hosts'
// ids, in order (h0, h1, ...). The mapping places endpoints on a list of racks, so
// any fabric that lists its racks can use it.
type Rack struct {
	Name  string
	Hosts []int32
}

// RackList lists the grid's racks in name order (pod, then rack), each with its
// hosts in order.
func (g HostGrid) RackList() []Rack {
	racks := make([]Rack, g.Racks())
	for r := range racks {
		racks[r].Name = rackName(g, r)
		racks[r].Hosts = make([]int32, g.HostsPerRack)
		for h := range racks[r].Hosts {
			racks[r].Hosts[h] = int32(r*g.HostsPerRack + h)
		}
	}
	return racks
}

// Host-mapping modes (docs/model.md#host-mapping, flag --hosts).
const (
	MapSubnet = "subnet"
	MapHash   = "hash"
	MapSpread = "spread"
)

// ErrHostMap is wrapped by every host-mapping error.
var ErrHostMap = errors.New("host mapping")

// HostMap assigns every endpoint (IPv4 or IPv6 address) of a trace to a host of the
// fabric.
type HostMap struct {
	Grid   HostGrid
	Mode   string    // "subnet", "hash", "spread" or the CSV file's path
	Racks  []Rack    // the racks mapped onto, in order
	Names  HostNames // the hosts' names
	byAddr map[ipaddr.Addr]int32
	rackOf []int32 // host id -> index in Racks
	// Groups counts the subnet mapping's groups; Split those spread over several
	// racks (larger than any rack's free hosts), Moved those placed whole on another
	// rack than their own (docs/model.md#host-mapping).
	Groups, Split, Moved int
}

// Host returns the host of addr; ok is false for an address the map does not know.
func (m *HostMap) Host(addr ipaddr.Addr) (int32, bool) {
	id, ok := m.byAddr[addr]
	return id, ok
}

// Len is the number of mapped endpoints.
func (m *HostMap) Len() int { return len(m.byAddr) }

// Endpoints lists the mapped endpoints in numeric order (IPv4 first) with their
// hosts.
func (m *HostMap) Endpoints() (addrs []ipaddr.Addr, hosts []int32) {
	for a := range m.byAddr {
		addrs = append(addrs, a)
	}
	slices.SortFunc(addrs, ipaddr.Addr.Compare)
	for _, a := range addrs {
		hosts = append(hosts, m.byAddr[a])
	}
	return addrs, hosts
}

// RackOf is the index in Racks of host id's rack.
func (m *HostMap) RackOf(id int32) int { return int(m.rackOf[id]) }

// PerRack counts the endpoints and the distinct hosts they use on each rack of Racks.
func (m *HostMap) PerRack() (endpoints, hosts []int) {
	endpoints, hosts = make([]int, len(m.Racks)), make([]int, len(m.Racks))
	used := map[int32]bool{}
	for _, id := range m.byAddr {
		r := m.rackOf[id]
		endpoints[r]++
		if !used[id] {
			used[id] = true
			hosts[r]++
		}
	}
	return endpoints, hosts
}

// Unused says, when the mapping leaves the fabric unused (docs/model.md#host-mapping),
// why and what to change: every endpoint on one host (every packet is intra-host), or
// every endpoint in one rack (no packet crosses a rack's uplinks). "" otherwise, and
// for fewer than two endpoints.
func (m *HostMap) Unused() string {
	if m.Len() < 2 || len(m.Racks) < 2 {
		return ""
	}
	eps, hosts := m.PerRack()
	racks, used := 0, 0
	var rack string
	for r, n := range eps {
		if n > 0 {
			racks++
			rack = m.Racks[r].Name
		}
		used += hosts[r]
	}
	fix := "spread them over the racks with --hosts spread, or give each address a group of its own with --rack-prefix 32 (--rack-prefix6 128), or map them with a CSV file (--hosts FILE)"
	mode := "--hosts " + m.Mode
	switch {
	case used == 1:
		return fmt.Sprintf("%s maps all %d endpoints to one host: every packet is intra-host and nothing enters the fabric; %s", mode, m.Len(), fix)
	case racks == 1:
		return fmt.Sprintf("%s maps all %d endpoints to rack %s: no packet crosses the fabric beyond that rack; %s", mode, m.Len(), rack, fix)
	}
	return ""
}

// Default grouping prefixes of the subnet mapping (--rack-prefix, --rack-prefix6).
const (
	DefaultRackPrefix  = 24
	DefaultRackPrefix6 = 64
)

// MapHosts maps endpoints onto the grid's racks (MapRacks with g.RackList() and the
// grid's host names).
func MapHosts(mode string, endpoints []ipaddr.Addr, g HostGrid, prefixLen, prefixLen6 int) (*HostMap, error) {
	if g.Hosts() <= 0 {
		return nil, fmt.Errorf("%w: the topology has no hosts", ErrHostMap)
	}
	m, err := MapRacks(mode, endpoints, g.RackList(), g, prefixLen, prefixLen6)
	if m != nil {
		m.Grid = g
	}
	return m, err
}

// HostNames names the hosts of a fabric (HostGrid does for the Clos).
type HostNames interface {
	HostName(id int32) string
	HostID(name string) (int32, bool)
}

// MapRacks maps endpoints onto racks (docs/model.md#host-mapping). mode is "subnet"
// (default when empty), "spread", "hash", or the path of a CSV file of
// "cidr,host-name" lines whose names names resolves. prefixLen and prefixLen6 are
// the subnet mode's grouping prefixes for IPv4 and IPv6 endpoints (0: 24 and 64;
// flags --rack-prefix and --rack-prefix6). Endpoints are taken in numeric order,
// IPv4 before IPv6.
//
// subnet: endpoints are grouped by their /prefixLen (IPv4) or /prefixLen6 (IPv6);
// group i, counted over both families, belongs to rack i mod len(racks). A group
// goes whole onto its rack's first free hosts when they are enough; else whole onto
// the next rack (in list order, wrapping around) with enough free hosts; else, larger
// than any rack's free hosts, it fills free hosts rack by rack from its own. The
// mapping fails only when there are more endpoints than hosts.
//
// spread: endpoint k goes to the first free host of the k-th rack in turn (racks
// round-robin, skipping full ones): endpoints on as many racks as there are.
//
// hash: endpoint a goes to host crc32IEEE(a's 4 or 16 bytes, big-endian) mod the
// number of hosts, in rack order; several endpoints may share a host (their packets
// to each other are intra-host).
//
// CSV: each endpoint goes to the host of the longest matching prefix of its family
// (IPv4 or IPv6 CIDRs); an endpoint no line matches is an error naming it.
func MapRacks(mode string, endpoints []ipaddr.Addr, racks []Rack, names HostNames, prefixLen, prefixLen6 int) (*HostMap, error) {
	var all []int32
	for _, r := range racks {
		all = append(all, r.Hosts...)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%w: the topology has no hosts", ErrHostMap)
	}
	if mode == "" {
		mode = MapSubnet
	}
	m := &HostMap{Mode: mode, Racks: racks, Names: names, byAddr: make(map[ipaddr.Addr]int32, len(endpoints))}
	m.rackOf = make([]int32, slices.Max(all)+1)
	for i, r := range racks {
		for _, h := range r.Hosts {
			m.rackOf[h] = int32(i)
		}
	}
	eps := slices.Clone(endpoints)
	slices.SortFunc(eps, ipaddr.Addr.Compare)
	eps = slices.Compact(eps)
	switch mode {
	case MapSubnet:
		return m, m.bySubnet(eps, prefixLen, prefixLen6)
	case MapSpread:
		return m, m.spread(eps)
	case MapHash:
		for _, a := range eps {
			m.byAddr[a] = all[crc32.ChecksumIEEE(a.Bytes())%uint32(len(all))]
		}
		return m, nil
	}
	f, err := os.Open(mode)
	if err != nil {
		return nil, fmt.Errorf("%w: --hosts %q is neither %q, %q, %q nor a readable CSV file: %v", ErrHostMap, mode, MapSubnet, MapSpread, MapHash, err)
	}
	defer f.Close()
	rules, err := parseHostCSV(mode, f, names, all)
	if err != nil {
		return nil, err
	}
	for _, a := range eps {
		addr := a.Netip()
		best := -1
		for i, r := range rules {
			if r.prefix.Contains(addr) && (best < 0 || r.prefix.Bits() > rules[best].prefix.Bits()) {
				best = i
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("%w: %s: no line matches endpoint %s (add a cidr,host-name line covering it)", ErrHostMap, mode, addr)
		}
		m.byAddr[a] = rules[best].host
	}
	return m, nil
}

// tooMany is the error of a mapping of endpoints eps that has more endpoints than
// hosts: it names the smallest HostsPerRack that fits the racks, and the family
// that fits alone when there are both.
func (m *HostMap) tooMany(eps []ipaddr.Addr, what string) error {
	hosts := 0
	for _, r := range m.Racks {
		hosts += len(r.Hosts)
	}
	n := len(eps)
	var fam [3]int
	for _, a := range eps {
		fam[a.Family()]++
	}
	fix := fmt.Sprintf("use a bigger topology (Topology.HostsPerRack, RacksPerPod or Pods: e.g. --set Topology.HostsPerRack=%d)", (n+len(m.Racks)-1)/len(m.Racks))
	if v4, v6 := fam[ipaddr.IPv4], fam[ipaddr.IPv6]; v4 > 0 && v6 > 0 && (v4 <= hosts || v6 <= hosts) {
		fix += fmt.Sprintf(", replay one family (%d IPv4 and %d IPv6 endpoints: --family ipv4 or ipv6)", v4, v6)
	}
	return fmt.Errorf("%w: %d endpoints%s but %d hosts in %d racks: %s, or --hosts hash (several endpoints per host)",
		ErrHostMap, n, what, hosts, len(m.Racks), fix)
}

// spread places endpoint k on the first free host of the next rack in turn.
func (m *HostMap) spread(eps []ipaddr.Addr) error {
	used := make([]int, len(m.Racks))
	r := 0
	for _, a := range eps {
		for tries := 0; used[r] == len(m.Racks[r].Hosts); tries++ {
			if tries == len(m.Racks) {
				return m.tooMany(eps, "")
			}
			r = (r + 1) % len(m.Racks)
		}
		m.byAddr[a] = m.Racks[r].Hosts[used[r]]
		used[r]++
		r = (r + 1) % len(m.Racks)
	}
	return nil
}

func (m *HostMap) bySubnet(eps []ipaddr.Addr, prefixLen, prefixLen6 int) error {
	if prefixLen == 0 {
		prefixLen = DefaultRackPrefix
	}
	if prefixLen6 == 0 {
		prefixLen6 = DefaultRackPrefix6
	}
	if prefixLen < 1 || prefixLen > 32 {
		return fmt.Errorf("%w: --rack-prefix %d is outside 1..32", ErrHostMap, prefixLen)
	}
	if prefixLen6 < 1 || prefixLen6 > 128 {
		return fmt.Errorf("%w: --rack-prefix6 %d is outside 1..128", ErrHostMap, prefixLen6)
	}
	// The groups, in order: runs of endpoints with one masked prefix.
	var groups [][]ipaddr.Addr
	var fams [3]bool // families present
	prev := ipaddr.Addr{}
	for i, a := range eps {
		bits := prefixLen
		if a.Is6() {
			bits = prefixLen6
		}
		fams[a.Family()] = true
		if v := a.Masked(bits); i == 0 || v != prev {
			groups = append(groups, nil)
			prev = v
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], a)
	}
	m.Groups = len(groups)
	hosts := 0
	for _, r := range m.Racks {
		hosts += len(r.Hosts)
	}
	if len(eps) > hosts {
		noun := "subnets"
		if len(groups) == 1 {
			noun = "subnet"
		}
		subnets := fmt.Sprintf("/%d %s", prefixLen, noun)
		switch {
		case fams[ipaddr.IPv4] && fams[ipaddr.IPv6]:
			subnets = fmt.Sprintf("%s (IPv4 /%d, IPv6 /%d)", noun, prefixLen, prefixLen6)
		case fams[ipaddr.IPv6]:
			subnets = fmt.Sprintf("/%d %s", prefixLen6, noun)
		}
		return m.tooMany(eps, fmt.Sprintf(" in %d %s", len(groups), subnets))
	}
	nr := len(m.Racks)
	used := make([]int, nr) // hosts taken per rack
	free := func(r int) int { return len(m.Racks[r].Hosts) - used[r] }
	place := func(r int, a ipaddr.Addr) {
		m.byAddr[a] = m.Racks[r].Hosts[used[r]]
		used[r]++
	}
	for i, g := range groups {
		home := i % nr
		rack := -1
		for k := 0; k < nr; k++ {
			if r := (home + k) % nr; free(r) >= len(g) {
				rack = r
				break
			}
		}
		if rack >= 0 {
			if rack != home {
				m.Moved++
			}
			for _, a := range g {
				place(rack, a)
			}
			continue
		}
		// Larger than any rack's free hosts: fill them rack by rack from home (the
		// endpoints fit, so the free hosts suffice).
		m.Split++
		r := home
		for _, a := range g {
			for free(r) == 0 {
				r = (r + 1) % nr
			}
			place(r, a)
		}
	}
	return nil
}

func rackName(g HostGrid, rack int) string {
	return fmt.Sprintf("rack-p%d-r%d", rack/g.RacksPerPod, rack%g.RacksPerPod)
}

type hostRule struct {
	prefix netip.Prefix
	host   int32
}

func parseHostCSV(path string, r io.Reader, names HostNames, hosts []int32) ([]hostRule, error) {
	var rules []hostRule
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cidr, host, ok := strings.Cut(text, ",")
		if !ok {
			return nil, fmt.Errorf("%w: %s:%d: want \"cidr,host-name\", got %q", ErrHostMap, path, line, text)
		}
		cidr, host = strings.TrimSpace(cidr), strings.TrimSpace(host)
		if line == 1 && strings.EqualFold(cidr, "cidr") {
			continue // header
		}
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			a, aerr := netip.ParseAddr(cidr)
			if aerr != nil || a.Zone() != "" {
				return nil, fmt.Errorf("%w: %s:%d: %q is not an IPv4 or IPv6 CIDR or address", ErrHostMap, path, line, cidr)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		id, ok := names.HostID(host)
		if !ok || !slices.Contains(hosts, id) {
			return nil, fmt.Errorf("%w: %s:%d: %q is not a host of this topology (names look like %s .. %s)",
				ErrHostMap, path, line, host, names.HostName(hosts[0]), names.HostName(hosts[len(hosts)-1]))
		}
		rules = append(rules, hostRule{p.Masked(), id})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrHostMap, path, err)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%w: %s: no cidr,host-name lines", ErrHostMap, path)
	}
	return rules, nil
}
