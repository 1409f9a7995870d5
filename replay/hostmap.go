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

// Host-mapping modes (docs/model.md#replay, flag --hosts).
const (
	MapSubnet = "subnet"
	MapHash   = "hash"
)

// ErrHostMap is wrapped by every host-mapping error.
var ErrHostMap = errors.New("host mapping")

// HostMap assigns every endpoint (IPv4 or IPv6 address) of a trace to a host of the
// fabric.
type HostMap struct {
	Grid   HostGrid
	Mode   string // "subnet", "hash" or the CSV file's path
	byAddr map[ipaddr.Addr]int32
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

// Default grouping prefixes of the subnet mapping (--rack-prefix, --rack-prefix6).
const (
	DefaultRackPrefix  = 24
	DefaultRackPrefix6 = 64
)

// MapHosts maps endpoints onto the grid (docs/model.md#host-mapping). mode is
// "subnet" (default when empty), "hash", or the path of a CSV file of
// "cidr,host-name" lines. prefixLen and prefixLen6 are the subnet mode's grouping
// prefixes for IPv4 and IPv6 endpoints (0: 24 and 64; flags --rack-prefix and
// --rack-prefix6).
//
// subnet: distinct endpoints sorted numerically, IPv4 before IPv6, are grouped by
// their /prefixLen (IPv4) or /prefixLen6 (IPv6); group i, counted over both
// families, goes to rack i mod Racks (racks in name order: pod, then rack) and its
// endpoints take that rack's hosts in order, continuing after any group placed there
// before. A rack that would receive more endpoints than HostsPerRack is an error.
//
// hash: endpoint a goes to host crc32IEEE(a's 4 or 16 bytes, big-endian) mod Hosts;
// several endpoints may share a host (their packets to each other are intra-host).
//
// CSV: each endpoint goes to the host of the longest matching prefix of its family
// (IPv4 or IPv6 CIDRs); an endpoint no line matches is an error naming it.
func MapHosts(mode string, endpoints []ipaddr.Addr, g HostGrid, prefixLen, prefixLen6 int) (*HostMap, error) {
	if g.Hosts() <= 0 {
		return nil, fmt.Errorf("%w: the topology has no hosts", ErrHostMap)
	}
	if mode == "" {
		mode = MapSubnet
	}
	m := &HostMap{Grid: g, Mode: mode, byAddr: make(map[ipaddr.Addr]int32, len(endpoints))}
	eps := slices.Clone(endpoints)
	slices.SortFunc(eps, ipaddr.Addr.Compare)
	eps = slices.Compact(eps)
	switch mode {
	case MapSubnet:
		return m, m.bySubnet(eps, prefixLen, prefixLen6)
	case MapHash:
		for _, a := range eps {
			m.byAddr[a] = int32(crc32.ChecksumIEEE(a.Bytes()) % uint32(g.Hosts()))
		}
		return m, nil
	}
	f, err := os.Open(mode)
	if err != nil {
		return nil, fmt.Errorf("%w: --hosts %q is neither %q, %q nor a readable CSV file: %v", ErrHostMap, mode, MapSubnet, MapHash, err)
	}
	defer f.Close()
	rules, err := parseHostCSV(mode, f, g)
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
	g := m.Grid
	used := make([]int, g.Racks())   // hosts taken per rack
	wanted := make([]int, g.Racks()) // endpoints the rack would receive
	group, prev := -1, ipaddr.Addr{}
	var fams [3]bool // families present
	for _, a := range eps {
		bits := prefixLen
		if a.Is6() {
			bits = prefixLen6
		}
		fams[a.Family()] = true
		if v := a.Masked(bits); group < 0 || v != prev {
			group++
			prev = v
		}
		rack := group % g.Racks()
		wanted[rack]++
		if used[rack] < g.HostsPerRack {
			m.byAddr[a] = int32(rack*g.HostsPerRack + used[rack])
			used[rack]++
		}
	}
	for rack, n := range wanted {
		if n > g.HostsPerRack {
			subnets, longer := fmt.Sprintf("/%d subnets", prefixLen), "--rack-prefix"
			switch {
			case fams[ipaddr.IPv4] && fams[ipaddr.IPv6]:
				subnets, longer = fmt.Sprintf("subnets (IPv4 /%d, IPv6 /%d)", prefixLen, prefixLen6), "--rack-prefix or --rack-prefix6"
			case fams[ipaddr.IPv6]:
				subnets, longer = fmt.Sprintf("/%d subnets", prefixLen6), "--rack-prefix6"
			}
			return fmt.Errorf("%w: %d endpoints in %d %s; rack %s would receive %d endpoints but has %d hosts "+
				"(%d hosts in all): use a bigger topology (Topology.HostsPerRack, RacksPerPod or Pods), a longer %s, or --hosts hash",
				ErrHostMap, len(eps), group+1, subnets, rackName(g, rack), n, g.HostsPerRack, g.Hosts(), longer)
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

func parseHostCSV(path string, r io.Reader, g HostGrid) ([]hostRule, error) {
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
		id, ok := g.HostID(host)
		if !ok {
			return nil, fmt.Errorf("%w: %s:%d: %q is not a host of this topology (names look like %s .. %s)",
				ErrHostMap, path, line, host, g.HostName(0), g.HostName(int32(g.Hosts()-1)))
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
