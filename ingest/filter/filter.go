package filter

import (
	"strings"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// Filter is a parsed filter expression. Its Match is safe for concurrent use.
type Filter struct {
	expr  string
	nodes []node
	kids  []int32 // children of and/or nodes, node.a..node.b
	root  int32
}

// op is a node's operation.
type op uint8

const (
	opAnd op = iota
	opOr
	opNot
	opFamily // the packet's family is fam
	opProto  // (fam) the upper-layer protocol is proto
	opHost   // (fam) an address (by dir) is addr
	opNet    // (fam) an address (by dir) is in net
	opPort   // (protos, fam) a port (by dir) is in lo..hi
	opDSCP   // the DSCP is lo
)

// dir says which addresses or ports a primitive looks at.
type dir uint8

const (
	dirEither dir = iota // src or dst (the default)
	dirSrc
	dirDst
	dirBoth // src and dst
)

// Protocol bits of a port primitive.
const (
	protoTCP uint8 = 1 << iota
	protoUDP
)

type node struct {
	op     op
	dir    dir
	fam    ipaddr.Family // 0: either
	proto  uint8         // opProto
	protos uint8         // opPort: protoTCP | protoUDP
	lo, hi uint16        // opPort: the range; opDSCP: lo
	a, b   int32         // and/or: kids[a:b]; not: a is the child
	addr   ipaddr.Addr   // opHost; opNet: the network (masked)
	mhi    uint64        // opNet: the mask's words
	mlo    uint64
}

// Parse parses a filter expression (see the package documentation for the grammar).
// The error is a *SyntaxError.
func Parse(expr string) (*Filter, error) {
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{expr: expr, toks: toks, f: &Filter{expr: strings.TrimSpace(expr)}}
	if len(toks) == 0 {
		return nil, p.errAt(len(expr), "", "empty expression (want a primitive such as tcp, host 10.0.0.1 or port 443)")
	}
	root, err := p.parseExpr(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t != nil {
		if t.kind == tokClose {
			return nil, p.err(t, "a ) without its (")
		}
		return nil, p.err(t, "want and, or, or the end of the expression after a primitive")
	}
	p.f.root = root
	return p.f, nil
}

// String returns the expression as given (without surrounding spaces).
func (f *Filter) String() string { return f.expr }

// Match reports whether the filter keeps p.
func (f *Filter) Match(p *ingest.Packet) bool { return f.eval(f.root, p) }

func (f *Filter) eval(i int32, p *ingest.Packet) bool {
	n := &f.nodes[i]
	switch n.op {
	case opAnd:
		for _, k := range f.kids[n.a:n.b] {
			if !f.eval(k, p) {
				return false
			}
		}
		return true
	case opOr:
		for _, k := range f.kids[n.a:n.b] {
			if f.eval(k, p) {
				return true
			}
		}
		return false
	case opNot:
		return !f.eval(n.a, p)
	case opDSCP:
		return uint16(p.DSCP) == n.lo
	}
	if n.fam != 0 && p.Src.Family() != n.fam {
		return false
	}
	switch n.op {
	case opFamily:
		return true
	case opProto:
		return p.Proto == n.proto
	case opHost:
		return n.match(p.Src == n.addr, p.Dst == n.addr)
	case opNet:
		return n.match(n.inNet(p.Src), n.inNet(p.Dst))
	case opPort:
		switch {
		case p.Proto == 6 && n.protos&protoTCP != 0, p.Proto == 17 && n.protos&protoUDP != 0:
		default:
			return false
		}
		if p.Fragment && p.FragOffset != 0 {
			return false
		}
		return n.match(p.SrcPort >= n.lo && p.SrcPort <= n.hi, p.DstPort >= n.lo && p.DstPort <= n.hi)
	}
	return false
}

// match combines the source and destination tests by the node's direction.
func (n *node) match(src, dst bool) bool {
	switch n.dir {
	case dirSrc:
		return src
	case dirDst:
		return dst
	case dirBoth:
		return src && dst
	}
	return src || dst
}

func (n *node) inNet(a ipaddr.Addr) bool {
	hi, lo := a.Words()
	nhi, nlo := n.addr.Words()
	return a.Family() == n.addr.Family() && hi&n.mhi == nhi && lo&n.mlo == nlo
}
