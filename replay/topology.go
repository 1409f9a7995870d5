package replay

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tracefabric/tracefabric/fabric"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// Topology is the fabric a run simulates (docs/model.md#topology): the graph of
// package fabric (the configuration's Clos, or Topology.File), its routing, the
// host layer the host mapping places endpoints on, and its longest path
// (docs/model.md#fabric-bdp). Switch attributes (profiles) and the BaseRTT, which
// depend on the rest of the configuration, come from SwitchConfigs and BaseRTT.
type Topology struct {
	*fabric.Fabric
	Routes *fabric.Routes
	// HostRacks are the racks (switches with hosts) as the host mapping places
	// endpoints on them (MapRacks), in node order.
	HostRacks []Rack
	Longest   fabric.Path
}

// HostName names host id (HostNames).
func (t *Topology) HostName(id int32) string { return t.Nodes[id].Name }

// HostID returns the host named name (HostNames); ok is false for a switch or an
// unknown name.
func (t *Topology) HostID(name string) (int32, bool) {
	id, ok := t.Lookup(name)
	return id, ok && id < int32(t.Hosts)
}

// NewTopology builds, routes and validates the fabric of cfg (SwitchConfigs).
func NewTopology(cfg *config.Config) (*Topology, error) {
	var f *fabric.Fabric
	var err error
	if cfg.Topology.File != "" {
		f, err = fabric.Load(cfg.Topology.File)
	} else {
		f, err = fabric.FromConfig(cfg.Topology)
	}
	if err != nil {
		return nil, err
	}
	t := &Topology{Fabric: f, Routes: fabric.Route(f, nil)}
	for _, r := range f.Racks {
		t.HostRacks = append(t.HostRacks, Rack{Name: f.Nodes[r.Node].Name, Hosts: r.Hosts})
	}
	if _, _, err := t.SwitchConfigs(cfg); err != nil {
		return nil, err
	}
	mtu := cfg.Switch.Mtu
	t.Longest = t.Routes.LongestPath(func(l *fabric.Link) int64 {
		return int64(config.LinkRTT(config.Link{Speed: l.Speed, PropagationDelay: l.Delay}, mtu))
	})
	if len(t.Longest) > maxPathLinks {
		return nil, fmt.Errorf("%w: %s: routes of %d links (host to host); a packet's path holds at most %d", fabric.ErrInvalid,
			firstNonEmpty(f.Source, "the configuration's Topology"), len(t.Longest), maxPathLinks)
	}
	return t, nil
}

// SwitchConfigs returns the attributes of every node under cfg (nil for hosts) and
// the name of its profile ("" = Switch), by config.SwitchFor: the profile the
// topology file assigns, else the one named after the role, else Switch. Every
// assigned profile must exist and every switch's buffer layout fit; the error names
// the switch, its role and profile, and the topology file's line.
func (t *Topology) SwitchConfigs(cfg *config.Config) ([]*config.Switch, []string, error) {
	f := t.Fabric
	sws := make([]*config.Switch, len(f.Nodes))
	profs := make([]string, len(f.Nodes))
	type layoutKey struct{ profile, ports string }
	checked := map[layoutKey]bool{}
	var errs []string
	where := func(n *fabric.Node, line int) string {
		if f.Source == "" {
			return ""
		}
		if line == 0 {
			line = n.Line
		}
		return fmt.Sprintf("%s:%d: ", f.Source, line)
	}
	type miss struct {
		msg    string
		others int
	}
	var missing []*miss // an unknown profile: reported once, at its first switch
	byProfile := map[string]*miss{}
	for i := f.Hosts; i < len(f.Nodes); i++ {
		n := &f.Nodes[i]
		s, prof, err := cfg.SwitchFor(n.Profile, n.Role)
		if err != nil {
			if m, seen := byProfile[n.Profile]; seen {
				m.others++
				continue
			}
			m := &miss{msg: fmt.Sprintf("%sswitch %s%%s: %v", where(n, n.ProfileLine), n.Name, err)}
			byProfile[n.Profile] = m
			missing = append(missing, m)
			continue
		}
		sws[i], profs[i] = s, prof
		ports := f.PortLinks(int32(i))
		var kb strings.Builder
		for _, p := range ports {
			kb.WriteString(strconv.FormatInt(int64(p.Speed), 36))
			kb.WriteByte('/')
			kb.WriteString(strconv.FormatInt(int64(p.PropagationDelay), 36))
			kb.WriteByte(' ')
		}
		k := layoutKey{prof, kb.String()}
		if checked[k] {
			continue
		}
		checked[k] = true
		if _, err := s.Layout(ports); err != nil {
			err = config.InProfile(err, prof)
			errs = append(errs, fmt.Sprintf("%sswitch %s (role %s, %d ports): %v", where(n, n.ProfileLine), n.Name, n.Role, len(ports), err))
		}
	}
	for _, m := range missing {
		more := ""
		if m.others > 0 {
			more = fmt.Sprintf(" (and %d more)", m.others)
		}
		errs = append(errs, fmt.Sprintf(m.msg, more))
	}
	if len(errs) > 0 {
		if len(errs) > 10 {
			errs = append(errs[:10], fmt.Sprintf("(and %d more)", len(errs)-10))
		}
		return nil, nil, fmt.Errorf("%w: %s", fabric.ErrInvalid, strings.Join(errs, "\n"))
	}
	return sws, profs, nil
}

// BaseRTT is the round trip over the longest path under cfg's Mtu
// (docs/model.md#fabric-bdp), and BDP the product with the speed of its first link
// (the sending host's), rounded down to whole bytes. For the Clos they equal
// config's BaseRTT and BDP.
func (t *Topology) BaseRTT(cfg *config.Config) (units.Time, units.Bytes) {
	var rtt units.Time
	for _, id := range t.Longest {
		l := &t.Links[id]
		rtt += config.LinkRTT(config.Link{Speed: l.Speed, PropagationDelay: l.Delay}, cfg.Switch.Mtu)
	}
	if len(t.Longest) == 0 {
		return 0, 0
	}
	return rtt, units.BytesIn(t.Links[t.Longest[0]].Speed, rtt)
}

// Picture is the fabric laid out by layers (fabric.Fabric.Picture).
func (t *Topology) Picture() fabric.Picture { return t.Fabric.Picture() }

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
