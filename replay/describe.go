package replay

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracefabric/tracefabric/fabric"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// Description is what `replay topology` says of a fabric (docs/topology.md#describe).
type Description struct {
	Shape  string `json:"shape"`
	Source string `json:"file,omitempty"`
	Hosts  int    `json:"hosts"`
	Nodes  int    `json:"nodes"`
	Links  int    `json:"links"`
	// Roles, lowest level first.
	Roles []RoleSummary `json:"roles"`
	// LinkClasses groups links by the roles of their ends, speed and delay.
	LinkClasses []LinkClass `json:"link_classes"`
	// BisectionBps is fabric.Fabric.Bisection.
	BisectionBps int64 `json:"bisection_bps"`
	// Longest is the longest path's nodes, from the sending host.
	Longest   []string `json:"longest_path"`
	BaseRTTPs int64    `json:"base_rtt_ps"`
	BDPBytes  int64    `json:"bdp_bytes"`
	// Sets counts the distinct next-hop sets of all switches; WCMPSets those with
	// unequal weights; RouteBytes the routing tables' size.
	Sets       int   `json:"sets"`
	WCMPSets   int   `json:"wcmp_sets"`
	RouteBytes int64 `json:"route_bytes"`
}

// RoleSummary is one role of switches (or the hosts).
type RoleSummary struct {
	Role     string   `json:"role"`
	Tier     string   `json:"tier"`
	Level    int      `json:"level"`
	Count    int      `json:"count"`
	Profiles []string `json:"profiles,omitempty"` // profile names in use ("Switch" for none)
	// Ports, down and up: the range over the role's switches (min = max when alike).
	PortsMin int `json:"ports_min"`
	PortsMax int `json:"ports_max"`
	// Oversubscription is down bandwidth over up bandwidth per switch: min and max
	// over the role (0: no uplinks).
	OversubMin float64 `json:"oversubscription_min"`
	OversubMax float64 `json:"oversubscription_max"`
	// Headroom lists the auto (or fixed) headroom per port class: "100Gbps 1us:
	// 236,032 B" per profile.
	Headroom []string `json:"headroom,omitempty"`
	// Buffer is the profiles' BufferSize.
	Buffer []string `json:"buffer,omitempty"`
}

// LinkClass is a group of alike links.
type LinkClass struct {
	Between string `json:"between"` // "host - leaf"
	Count   int    `json:"count"`
	Speed   string `json:"speed"`
	Delay   string `json:"delay"`
}

// Describe describes the topology under cfg (its profiles and Mtu).
func (t *Topology) Describe(cfg *config.Config) (*Description, error) {
	sws, profs, err := t.SwitchConfigs(cfg)
	if err != nil {
		return nil, err
	}
	f := t.Fabric
	d := &Description{Shape: f.Shape, Source: f.Source, Hosts: f.Hosts, Nodes: len(f.Nodes), Links: len(f.Links)}
	rtt, bdp := t.BaseRTT(cfg)
	d.BaseRTTPs, d.BDPBytes = int64(rtt), int64(bdp)
	if len(t.Longest) > 0 {
		n := f.Links[t.Longest[0]].A.Node
		if n >= int32(f.Hosts) {
			n = f.Links[t.Longest[0]].B.Node
		}
		d.Longest = append(d.Longest, f.Nodes[n].Name)
		for _, id := range t.Longest {
			n = f.Links[id].Other(n).Node
			d.Longest = append(d.Longest, f.Nodes[n].Name)
		}
	}
	d.BisectionBps = int64(f.Bisection())
	d.Sets, d.RouteBytes = t.Routes.SetCount(), t.Routes.Bytes()
	for _, sets := range t.Routes.Sets {
		for _, s := range sets {
			if s.Weights != nil {
				d.WCMPSets++
			}
		}
	}
	// Roles in order of level, then first appearance.
	byRole := map[string]*RoleSummary{}
	var order []string
	headroom := map[string]map[string]bool{}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		r, ok := byRole[n.Role]
		if !ok {
			r = &RoleSummary{Role: n.Role, Tier: RecordTier(n.Tier).String(), Level: n.Level, PortsMin: len(n.Ports), OversubMin: -1}
			byRole[n.Role] = r
			order = append(order, n.Role)
			headroom[n.Role] = map[string]bool{}
		}
		r.Count++
		r.Level = min(r.Level, n.Level)
		r.PortsMin, r.PortsMax = min(r.PortsMin, len(n.Ports)), max(r.PortsMax, len(n.Ports))
		if n.IsHost() {
			continue
		}
		p := profs[i]
		if p == "" {
			p = "Switch"
		}
		if !slices.Contains(r.Profiles, p) {
			r.Profiles = append(r.Profiles, p)
			r.Buffer = append(r.Buffer, fmt.Sprintf("%s %v", p, sws[i].BufferSize))
		}
		ports := f.PortLinks(int32(i))
		o := f.Oversubscription(int32(i))
		if r.OversubMin < 0 || o < r.OversubMin {
			r.OversubMin = o
		}
		r.OversubMax = max(r.OversubMax, o)
		if l, err := sws[i].Layout(ports); err == nil && l.LosslessPools > 0 {
			for pi, ps := range ports {
				k := fmt.Sprintf("%s: %v %v port %s B", p, ps.Speed, ps.PropagationDelay, units.FormatCount(int64(l.Headroom[pi])))
				if !headroom[n.Role][k] {
					headroom[n.Role][k] = true
					r.Headroom = append(r.Headroom, k)
				}
			}
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return byRole[a].Level - byRole[b].Level })
	for _, r := range order {
		d.Roles = append(d.Roles, *byRole[r])
	}
	type lk struct {
		a, b  string
		speed units.BitRate
		delay units.Time
	}
	classes := map[lk]int{}
	var lorder []lk
	for i := range f.Links {
		l := &f.Links[i]
		a, b := &f.Nodes[l.A.Node], &f.Nodes[l.B.Node]
		if a.Level > b.Level || (a.Level == b.Level && a.Role > b.Role) {
			a, b = b, a
		}
		k := lk{a.Role, b.Role, l.Speed, l.Delay}
		if classes[k] == 0 {
			lorder = append(lorder, k)
		}
		classes[k]++
	}
	for _, k := range lorder {
		d.LinkClasses = append(d.LinkClasses, LinkClass{Between: k.a + " - " + k.b, Count: classes[k], Speed: k.speed.String(), Delay: k.delay.String()})
	}
	return d, nil
}

// WriteText prints the description for a terminal.
func (d *Description) WriteText(w io.Writer) error {
	var b strings.Builder
	src := "the configuration's Topology"
	if d.Source != "" {
		src = d.Source
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, d.Source); err == nil && !strings.HasPrefix(rel, "..") {
				src = rel
			}
		}
	}
	fmt.Fprintf(&b, "fabric: %s (%s): %s hosts, %s switches, %s links\n", d.Shape, src,
		units.FormatCount(int64(d.Hosts)), units.FormatCount(int64(d.Nodes-d.Hosts)), units.FormatCount(int64(d.Links)))
	b.WriteString("roles (lowest first):\n")
	for _, r := range d.Roles {
		ports := fmt.Sprint(r.PortsMin)
		if r.PortsMax != r.PortsMin {
			ports = fmt.Sprintf("%d..%d", r.PortsMin, r.PortsMax)
		}
		if r.Role == fabric.RoleHost {
			fmt.Fprintf(&b, "  %-12s %s hosts\n", r.Role, units.FormatCount(int64(r.Count)))
			continue
		}
		over := "- (no uplinks)"
		if r.OversubMax > 0 {
			over = units.FormatDecimal(r.OversubMin) + ":1"
			if r.OversubMax != r.OversubMin {
				over += " .. " + units.FormatDecimal(r.OversubMax) + ":1"
			}
		}
		fmt.Fprintf(&b, "  %-12s %s switches, level %d (records tier %s), %s ports, oversubscription %s, buffer %s\n",
			r.Role, units.FormatCount(int64(r.Count)), r.Level, r.Tier, ports, over, strings.Join(r.Buffer, ", "))
	}
	b.WriteString("links:\n")
	for _, c := range d.LinkClasses {
		fmt.Fprintf(&b, "  %-24s %s x %s, %s\n", c.Between, units.FormatCount(int64(c.Count)), c.Speed, c.Delay)
	}
	fmt.Fprintf(&b, "bisection bandwidth: %v (max flow from the hosts of the first half of the racks to the rest)\n", units.BitRate(d.BisectionBps))
	fmt.Fprintf(&b, "longest path: %d links, %s\n", max(len(d.Longest)-1, 0), strings.Join(d.Longest, " - "))
	fmt.Fprintf(&b, "base RTT %s, BDP %s B (docs/model.md#fabric-bdp)\n", units.Time(d.BaseRTTPs).Human(), units.FormatCount(d.BDPBytes))
	b.WriteString("headroom per port (lossless pool):\n")
	for _, r := range d.Roles {
		for _, h := range r.Headroom {
			fmt.Fprintf(&b, "  %-12s %s\n", r.Role, h)
		}
	}
	fmt.Fprintf(&b, "routing: %s next-hop sets (%s weighted, WCMP), tables %s\n", units.FormatCount(int64(d.Sets)),
		units.FormatCount(int64(d.WCMPSets)), units.FormatBytes(float64(d.RouteBytes)))
	_, err := io.WriteString(w, b.String())
	return err
}
