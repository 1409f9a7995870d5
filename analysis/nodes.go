package analysis

import (
	"fmt"
	"strconv"
)

// NodeID is a node's index in its run's node table (Run.Nodes). The records give
// every node as an index into the run's node dictionary; analysis keeps nodes as
// these indices while it computes and names them only in what it writes (the
// summary, tables, reports).
type NodeID int32

// Nodes names the nodes of a run: Nodes[id] is node id's name (host-p0-r1-h5,
// rack-p0-r1, ...).
type Nodes []string

// Name returns node id's name ("node#N" for an id outside the table).
func (n Nodes) Name(id NodeID) string {
	if id >= 0 && int(id) < len(n) {
		return n[id]
	}
	return "node#" + strconv.Itoa(int(id))
}

// PortName is a named egress queue, as written: node name, port and traffic class.
type PortName struct {
	Node string `json:"node"`
	Port int32  `json:"port"`
	TC   uint8  `json:"tc"`
}

// String is "node:port/tcN".
func (p PortName) String() string { return fmt.Sprintf("%s:%d/tc%d", p.Node, p.Port, p.TC) }

// Port names a port-class.
func (n Nodes) Port(p PortClass) PortName {
	return PortName{Node: n.Name(p.Node), Port: p.Port, TC: p.TC}
}
