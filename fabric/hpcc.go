package fabric

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// ParseHPCC reads ns-3 HPCC's topology.txt (docs/topology.md#hpcc-topologytxt):
//
//	node_num switch_num link_num
//	switch_id ... (switch_num ids)
//	src dst rate delay error_rate   (link_num lines)
//
// Nodes are numbered 0..node_num-1; the ones not listed as switches are hosts, named
// host-ID (host ids in node-id order), switches switch-ID. Rates are ns-3 data rates
// ("100Gbps", "100Gb/s"), delays ns-3 times ("0.001ms", "1us"). A non-zero error
// rate is refused: tracefabric has no random link loss. Switch roles follow their
// level: leaf (next to hosts), spine, super-spine, level-N.
func ParseHPCC(data []byte, source string) (*Fabric, error) {
	b := newBuilder(ShapeHPCC, source)
	b.f.UpDown = false
	type lineFields struct {
		line int
		f    []string
	}
	var lines []lineFields
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			lines = append(lines, lineFields{n, strings.Fields(t)})
		}
	}
	if len(lines) == 0 {
		b.failf(0, "empty topology.txt")
		return nil, b.err()
	}
	atoi := func(l lineFields, i int, what string) int {
		v, err := strconv.Atoi(l.f[i])
		if err != nil || v < 0 {
			b.failf(l.line, "%s %q is not a non-negative integer", what, l.f[i])
			return -1
		}
		return v
	}
	h := lines[0]
	if len(h.f) != 3 {
		b.failf(h.line, "want \"node_num switch_num link_num\", got %q", strings.Join(h.f, " "))
		return nil, b.err()
	}
	nodes, switches, links := atoi(h, 0, "node_num"), atoi(h, 1, "switch_num"), atoi(h, 2, "link_num")
	if err := b.err(); err != nil {
		return nil, err
	}
	if nodes > config.MaxNodes {
		b.failf(h.line, "node_num %d is above %d", nodes, config.MaxNodes)
		return nil, b.err()
	}
	if switches > nodes {
		b.failf(h.line, "switch_num %d is more than node_num %d", switches, nodes)
		return nil, b.err()
	}
	isSwitch := make([]bool, nodes)
	rest := lines[1:]
	if switches > 0 {
		if len(rest) == 0 {
			b.failf(h.line, "switch_num %d but no line of switch ids", switches)
			return nil, b.err()
		}
		s := rest[0]
		rest = rest[1:]
		if len(s.f) != switches {
			b.failf(s.line, "%d switch ids, but the first line says switch_num %d", len(s.f), switches)
			return nil, b.err()
		}
		for i := range s.f {
			id := atoi(s, i, "switch id")
			switch {
			case id < 0:
			case id >= nodes:
				b.failf(s.line, "switch id %d is not a node (node_num %d: ids 0..%d)", id, nodes, nodes-1)
			case isSwitch[id]:
				b.failf(s.line, "switch id %d is listed twice (duplicate name switch-%d)", id, id)
			default:
				isSwitch[id] = true
			}
		}
	}
	if len(rest) != links {
		at := h.line
		if len(rest) > links {
			at = rest[links].line
		}
		b.failf(at, "%d link lines, but the first line says link_num %d", len(rest), links)
	}
	if err := b.err(); err != nil {
		return nil, err
	}
	idx := make([]int32, nodes) // HPCC id -> node index
	for id := range nodes {
		if !isSwitch[id] {
			idx[id] = b.node(Node{Name: fmt.Sprintf("host-%d", id), Role: RoleHost, Group: RoleHost, Pod: -1, Plane: -1, Index: id, Line: h.line})
		}
	}
	for id := range nodes {
		if isSwitch[id] {
			idx[id] = b.node(Node{Name: fmt.Sprintf("switch-%d", id), Pod: -1, Plane: -1, Index: id, Line: lines[1].line})
		}
	}
	for _, l := range rest {
		if len(l.f) != 5 {
			b.failf(l.line, "want \"src dst rate delay error_rate\", got %q", strings.Join(l.f, " "))
			continue
		}
		src, dst := atoi(l, 0, "src"), atoi(l, 1, "dst")
		if src < 0 || dst < 0 {
			continue
		}
		if src >= nodes || dst >= nodes {
			b.failf(l.line, "link %d - %d: unknown node (node_num %d: ids 0..%d)", src, dst, nodes, nodes-1)
			continue
		}
		rate, err := units.ParseBitRate(strings.Replace(l.f[2], "b/s", "bps", 1))
		if err != nil {
			b.failf(l.line, "link %d - %d: rate: %v", src, dst, err)
			continue
		}
		delay, err := units.ParseTime(l.f[3])
		if err != nil {
			b.failf(l.line, "link %d - %d: delay: %v", src, dst, err)
			continue
		}
		er, err := strconv.ParseFloat(l.f[4], 64)
		if err != nil {
			b.failf(l.line, "link %d - %d: error_rate %q is not a number", src, dst, l.f[4])
			continue
		}
		if er != 0 {
			b.failf(l.line, "link %d - %d: error_rate %v: tracefabric has no random link loss model (use 0)", src, dst, er)
			continue
		}
		b.connect(idx[src], idx[dst], config.Link{Speed: rate, PropagationDelay: delay}, "topology.txt", l.line)
	}
	f, err := b.finish()
	if err != nil {
		return nil, err
	}
	for i := f.Hosts; i < len(f.Nodes); i++ {
		n := &f.Nodes[i]
		switch n.Level {
		case 1:
			n.Role = "leaf"
		case 2:
			n.Role = "spine"
		case 3:
			n.Role = "super-spine"
		default:
			n.Role = fmt.Sprintf("level-%d", n.Level)
		}
		n.Group = n.Role
	}
	return f, nil
}
