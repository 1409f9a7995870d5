package filter

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/suggest"
)

// SyntaxError is a filter expression that does not parse: where and why.
type SyntaxError struct {
	Expr   string // the whole expression
	Column int    // 1-based byte column of the bad token (len(Expr)+1 at the end)
	Token  string // the bad token; "" at the end of the expression
	Rule   string // what is wrong and what was wanted
}

// Error prints `column 9, "prot": unknown word (did you mean port?)`, or
// `column 12 (the end): ...` when the expression stopped short.
func (e *SyntaxError) Error() string {
	if e.Token == "" {
		return fmt.Sprintf("column %d (the end): %s", e.Column, e.Rule)
	}
	return fmt.Sprintf("column %d, %q: %s", e.Column, e.Token, e.Rule)
}

// maxDepth bounds nesting (parentheses and not), and so the parser's and Match's
// recursion, whatever the input.
const maxDepth = 100

type tokKind uint8

const (
	tokWord tokKind = iota
	tokOpen
	tokClose
	tokNot
	tokAnd
	tokOr
)

type token struct {
	kind tokKind
	text string
	col  int // 1-based byte column
}

// lex splits expr into tokens: ( ) ! && || and words (runs of anything else but
// spaces); the words and, or, not are the operators.
func lex(expr string) ([]token, error) {
	var toks []token
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == '!':
			k := map[byte]tokKind{'(': tokOpen, ')': tokClose, '!': tokNot}[c]
			toks = append(toks, token{k, expr[i : i+1], i + 1})
			i++
		case c == '&' || c == '|':
			if i+1 < len(expr) && expr[i+1] == c {
				k := tokAnd
				if c == '|' {
					k = tokOr
				}
				toks = append(toks, token{k, expr[i : i+2], i + 1})
				i += 2
				continue
			}
			op := map[byte]string{'&': "&& (or and)", '|': "|| (or or)"}[c]
			return nil, &SyntaxError{Expr: expr, Column: i + 1, Token: expr[i : i+1], Rule: "a single " + string(c) + ": write " + op}
		default:
			j := i
			for j < len(expr) && !strings.ContainsRune(" \t\n\r()!&|", rune(expr[j])) {
				j++
			}
			w := expr[i:j]
			k := tokWord
			switch w {
			case "and":
				k = tokAnd
			case "or":
				k = tokOr
			case "not":
				k = tokNot
			}
			toks = append(toks, token{k, w, i + 1})
			i = j
		}
	}
	return toks, nil
}

// keywords are the words of the grammar, for suggestions.
var keywords = []string{"and", "or", "not", "src", "dst", "host", "net", "port", "portrange",
	"tcp", "udp", "icmp", "icmp6", "icmpv6", "ip", "ip6", "proto", "dscp"}

// unsupported are tcpdump words this filter does not take, with the reason.
var unsupported = map[string]string{
	"ether": "link-layer primitives are not supported: the filter sees each frame's decoded IP packet",
	"vlan":  "link-layer primitives are not supported: the filter sees each frame's decoded IP packet (VLAN tags are read through)",
	"mpls":  "link-layer primitives are not supported: the filter sees each frame's decoded IP packet",
	"arp":   "the filter sees IP packets only (ARP and other non-IP records are counted and skipped before it)",
	"rarp":  "the filter sees IP packets only (non-IP records are counted and skipped before it)",
	"len":   "length primitives are not supported (yet)", "greater": "length primitives are not supported (yet)",
	"less": "length primitives are not supported (yet)", "gateway": "gateway is not supported",
	"broadcast": "broadcast is not supported: a replay skips broadcast and multicast packets itself (counted multicast)",
	"multicast": "multicast is not supported: a replay skips multicast packets itself (counted multicast)",
	"sctp":      "sctp has no primitive: write proto sctp (SCTP ports are not decoded)",
	"ip6proto":  "write ip6 proto N", "ipproto": "write ip proto N",
}

// protoNames are the protocol names proto takes.
var protoNames = map[string]uint8{"tcp": 6, "udp": 17, "icmp": 1, "icmp6": 58, "icmpv6": 58, "igmp": 2,
	"gre": 47, "esp": 50, "ah": 51, "sctp": 132}

// qual is a primitive's qualifiers: what a value alone after and/or/not repeats.
type qual struct {
	kind   string // host, net, port, portrange, dscp, proto; "" before the first primitive
	dir    dir
	fam    ipaddr.Family
	protos uint8
	text   string // as written: "tcp dst port"
}

type parser struct {
	expr string
	toks []token
	pos  int
	f    *Filter
	last qual
}

func (p *parser) peek() *token {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

// peekWord returns the next token's text when it is a word, else "".
func (p *parser) peekWord() string {
	if t := p.peek(); t != nil && t.kind == tokWord {
		return t.text
	}
	return ""
}

func (p *parser) err(t *token, format string, args ...any) error {
	return &SyntaxError{Expr: p.expr, Column: t.col, Token: t.text, Rule: fmt.Sprintf(format, args...)}
}

func (p *parser) errAt(off int, tok, format string, args ...any) error {
	return &SyntaxError{Expr: p.expr, Column: off + 1, Token: tok, Rule: fmt.Sprintf(format, args...)}
}

// errEnd is an error at the end of the expression.
func (p *parser) errEnd(format string, args ...any) error {
	return p.errAt(len(p.expr), "", format, args...)
}

func (p *parser) add(n node) int32 {
	p.f.nodes = append(p.f.nodes, n)
	return int32(len(p.f.nodes) - 1)
}

func (p *parser) parseExpr(depth int) (int32, error) {
	first, err := p.term(depth)
	if err != nil {
		return 0, err
	}
	kids := []int32{first}
	var opTok *token
	for t := p.peek(); t != nil && (t.kind == tokAnd || t.kind == tokOr); t = p.peek() {
		if opTok != nil && opTok.kind != t.kind {
			return 0, p.err(t, "%s after %s (column %d) needs parentheses: write either (x %s y) %s z, or x %s (y %s z) (tcpdump reads and and or left to right, tshark binds and first)",
				t.text, opTok.text, opTok.col, opTok.text, t.text, opTok.text, t.text)
		}
		opTok = t
		p.pos++
		if p.peek() == nil {
			return 0, p.errEnd("the expression ends after %s: want a primitive", t.text)
		}
		k, err := p.term(depth)
		if err != nil {
			return 0, err
		}
		kids = append(kids, k)
	}
	if opTok == nil {
		return first, nil
	}
	n := node{op: opAnd, a: int32(len(p.f.kids))}
	if opTok.kind == tokOr {
		n.op = opOr
	}
	p.f.kids = append(p.f.kids, kids...)
	n.b = int32(len(p.f.kids))
	return p.add(n), nil
}

func (p *parser) term(depth int) (int32, error) {
	t := p.peek()
	if t == nil {
		return 0, p.errEnd("the expression ends where a primitive is wanted")
	}
	if depth >= maxDepth {
		return 0, p.err(t, "nested deeper than %d levels of parentheses and not", maxDepth)
	}
	switch t.kind {
	case tokNot:
		p.pos++
		if p.peek() == nil {
			return 0, p.errEnd("the expression ends after %s: want a primitive", t.text)
		}
		c, err := p.term(depth + 1)
		if err != nil {
			return 0, err
		}
		return p.add(node{op: opNot, a: c}), nil
	case tokOpen:
		p.pos++
		if c := p.peek(); c != nil && c.kind == tokClose {
			return 0, p.err(c, "empty parentheses: want a primitive")
		}
		e, err := p.parseExpr(depth + 1)
		if err != nil {
			return 0, err
		}
		c := p.peek()
		if c == nil {
			return 0, p.errEnd("want ) to close the ( of column %d", t.col)
		}
		if c.kind != tokClose {
			return 0, p.err(c, "want and, or, or ) to close the ( of column %d", t.col)
		}
		p.pos++
		return e, nil
	case tokClose:
		return 0, p.err(t, "a ) where a primitive is wanted")
	case tokAnd, tokOr:
		return 0, p.err(t, "%s where a primitive is wanted", t.text)
	}
	return p.primitive(t)
}

func isDir(w string) bool  { return w == "src" || w == "dst" }
func isKind(w string) bool { return w == "host" || w == "net" || w == "port" || w == "portrange" }

func (p *parser) primitive(t *token) (int32, error) {
	w := t.text
	switch w {
	case "ip", "ip6":
		fam := ipaddr.IPv4
		if w == "ip6" {
			fam = ipaddr.IPv6
		}
		p.pos++
		switch nw := p.peekWord(); {
		case nw == "proto":
			p.pos++
			return p.nextValue(qual{kind: "proto", fam: fam, text: w + " proto"})
		case isDir(nw) || isKind(nw):
			return p.qualified(qual{fam: fam, text: w})
		}
		return p.add(node{op: opFamily, fam: fam}), nil
	case "tcp", "udp":
		p.pos++
		if nw := p.peekWord(); isDir(nw) || isKind(nw) {
			protos := protoTCP
			if w == "udp" {
				protos = protoUDP
			}
			return p.qualified(qual{protos: protos, text: w})
		}
		return p.add(node{op: opProto, proto: protoNames[w]}), nil
	case "icmp", "icmp6", "icmpv6":
		p.pos++
		if nw := p.peekWord(); isDir(nw) || isKind(nw) || nw == "proto" {
			return 0, p.err(p.peek(), "%s takes no qualifiers (ICMP has no ports): write %s and %s ...", w, w, nw)
		}
		if w == "icmp" {
			return p.add(node{op: opProto, fam: ipaddr.IPv4, proto: 1}), nil
		}
		return p.add(node{op: opProto, fam: ipaddr.IPv6, proto: 58}), nil
	case "proto", "dscp":
		p.pos++
		return p.nextValue(qual{kind: w, text: w})
	case "src", "dst", "host", "net", "port", "portrange":
		return p.qualified(qual{})
	}
	if why, ok := unsupported[w]; ok || strings.ContainsAny(w, "[]") {
		if !ok {
			why = "byte offsets are not supported: the filter sees the decoded fields (ports, protocol, DSCP)"
		}
		return 0, p.err(t, "%s", why)
	}
	p.pos++
	if p.last.kind != "" {
		return p.value(p.last, *t, true)
	}
	// A value with no qualifiers at all: an address is a host, a network a net.
	if _, err := ipaddr.ParseAddr(w); err == nil {
		return p.value(qual{kind: "host", text: "host"}, *t, false)
	}
	if _, _, err := parseNet(w); err == nil && strings.ContainsAny(w, "/.:") {
		return p.value(qual{kind: "net", text: "net"}, *t, false)
	}
	if _, err := strconv.Atoi(w); err == nil {
		return 0, p.err(t, "a number alone: say what it is (port %s, dscp %s, proto %s)", w, w, w)
	}
	if s, ok := suggest.Nearest(w, keywords); ok {
		return 0, p.err(t, "unknown word (did you mean %s?)", s)
	}
	return 0, p.err(t, "unknown word: want a primitive (host, net, port, portrange, tcp, udp, icmp, icmp6, ip, ip6, proto, dscp) or an address (host names are not looked up)")
}

// qualified parses [dir] [kind] VALUE after the qualifiers already in q.
func (p *parser) qualified(q qual) (int32, error) {
	words := []string{}
	if q.text != "" {
		words = append(words, q.text)
	}
	if w := p.peekWord(); isDir(w) {
		p.pos++
		q.dir = dirSrc
		if w == "dst" {
			q.dir = dirDst
		}
		words = append(words, w)
		// "src or dst", "src and dst" (also "dst or src"): one direction qualifier.
		if p.pos+1 < len(p.toks) {
			op, other := p.toks[p.pos], p.toks[p.pos+1]
			if (op.kind == tokAnd || op.kind == tokOr) && other.kind == tokWord && isDir(other.text) && other.text != w {
				p.pos += 2
				q.dir = dirEither
				if op.kind == tokAnd {
					q.dir = dirBoth
				}
				words = append(words, op.text, other.text)
			}
		}
	}
	if w := p.peekWord(); isKind(w) {
		p.pos++
		q.kind = w
		words = append(words, w)
	}
	q.text = strings.Join(words, " ")
	if q.protos != 0 && q.kind != "port" && q.kind != "portrange" {
		if q.kind != "" {
			kt := &p.toks[p.pos-1]
			return 0, p.err(kt, "%s qualifies port and portrange, not %s: write %s and %s ...", protoWord(q.protos), q.kind, protoWord(q.protos), q.kind)
		}
		if t := p.peek(); t != nil {
			return 0, p.err(t, "want port or portrange after %s", q.text)
		}
		return 0, p.errEnd("the expression ends after %s: want port or portrange", q.text)
	}
	return p.nextValue(q)
}

// nextValue takes the next token as the value of a primitive qualified by q.
func (p *parser) nextValue(q qual) (int32, error) {
	t := p.peek()
	if t == nil {
		return 0, p.errEnd("the expression ends after %s: want %s", q.text, want(q.kind))
	}
	if t.kind != tokWord {
		return 0, p.err(t, "want %s after %s", want(q.kind), q.text)
	}
	p.pos++
	return p.value(q, *t, false)
}

func protoWord(protos uint8) string {
	if protos == protoUDP {
		return "udp"
	}
	return "tcp"
}

// want names what a kind of primitive takes.
func want(kind string) string {
	switch kind {
	case "host":
		return "an IPv4 or IPv6 address"
	case "net":
		return "a network (10.0.0.0/8, 2001:db8::/32, 10.1)"
	case "port":
		return "a port number 0..65535"
	case "portrange":
		return "a port range A-B"
	case "dscp":
		return "a DSCP 0..63 or a name (cs3, af31, ef)"
	case "proto":
		return "a protocol number 0..255 or name (tcp, udp, icmp, icmp6, igmp, gre, esp, ah, sctp)"
	}
	return "an address or a network"
}

// value parses the value token t of a primitive qualified by q (a bare value after
// and/or/not when abbrev: q is the previous primitive's) and adds its node.
func (p *parser) value(q qual, t token, abbrev bool) (int32, error) {
	if t.kind != tokWord {
		return 0, p.err(&t, "want %s after %s", want(q.kind), q.text)
	}
	fail := func(format string, args ...any) (int32, error) {
		msg := fmt.Sprintf(format, args...)
		if abbrev {
			msg += fmt.Sprintf(" (a value alone repeats the previous primitive's qualifiers, %s)", q.text)
		}
		return 0, p.err(&t, "%s", msg)
	}
	w := t.text
	kind := q.kind
	if kind == "" { // [dir] VALUE: a host or a net, by the value
		if _, err := ipaddr.ParseAddr(w); err == nil {
			kind = "host"
		} else {
			kind = "net"
		}
	}
	n := node{dir: q.dir, fam: q.fam}
	switch kind {
	case "host":
		a, err := ipaddr.ParseAddr(w)
		if err != nil {
			if _, _, nerr := parseNet(w); nerr == nil && strings.Contains(w, "/") {
				return fail("a network, not an address: write net %s", w)
			}
			return fail("not an IPv4 or IPv6 address (host names are not looked up)")
		}
		if q.fam != 0 && a.Family() != q.fam {
			return fail("an %s address: %s host takes %s", a.Family(), familyWord(q.fam), q.fam)
		}
		n.op, n.addr, n.fam = opHost, a, 0
	case "net":
		a, bits, err := parseNet(w)
		if err != nil {
			return fail("%v", err)
		}
		if q.fam != 0 && a.Family() != q.fam {
			return fail("an %s network: %s net takes %s", a.Family(), familyWord(q.fam), q.fam)
		}
		n.op, n.addr, n.fam = opNet, a.Masked(bits), 0
		n.mhi, n.mlo = allOnes(a.Family()).Masked(bits).Words()
	case "port", "portrange":
		n.op, n.protos = opPort, q.protos
		if n.protos == 0 {
			n.protos = protoTCP | protoUDP
		}
		if kind == "port" {
			v, err := strconv.ParseUint(w, 10, 16)
			if err != nil {
				return fail("not a port number 0..65535 (port names are not looked up)")
			}
			n.lo, n.hi = uint16(v), uint16(v)
			break
		}
		a, b, ok := strings.Cut(w, "-")
		lo, err1 := strconv.ParseUint(a, 10, 16)
		hi, err2 := strconv.ParseUint(b, 10, 16)
		if !ok || err1 != nil || err2 != nil || lo > hi {
			return fail("not a port range A-B with 0 <= A <= B <= 65535")
		}
		n.lo, n.hi = uint16(lo), uint16(hi)
	case "dscp":
		d, ok := parseDSCP(w)
		if !ok {
			return fail("not a DSCP: want 0..63 or cs0..cs7, af11..af43, ef, va, le")
		}
		n.op, n.lo = opDSCP, uint16(d)
	case "proto":
		v, ok := protoNames[w]
		if !ok {
			x, err := strconv.ParseUint(w, 10, 8)
			if err != nil {
				return fail("not a protocol: want 0..255 or tcp, udp, icmp, icmp6, igmp, gre, esp, ah, sctp")
			}
			v = uint8(x)
		}
		n.op, n.proto = opProto, v
	}
	q.kind = kind
	p.last = q
	return p.add(n), nil
}

func familyWord(f ipaddr.Family) string {
	if f == ipaddr.IPv6 {
		return "ip6"
	}
	return "ip"
}

// allOnes is the address of all ones of family f.
func allOnes(f ipaddr.Family) ipaddr.Addr {
	if f == ipaddr.IPv6 {
		return ipaddr.FromSlice16([]byte{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255})
	}
	return ipaddr.FromUint32(0xffffffff)
}

// parseNet reads a network: a CIDR with no bits past its prefix, an address (all
// its bits), or tcpdump's short IPv4 forms "10", "10.1", "10.1.2" (/8, /16, /24).
func parseNet(s string) (ipaddr.Addr, int, error) {
	if strings.Contains(s, "/") {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			return ipaddr.Addr{}, 0, fmt.Errorf("not a network: want a CIDR such as 10.0.0.0/8 or 2001:db8::/32")
		}
		if m := pfx.Masked(); m != pfx {
			return ipaddr.Addr{}, 0, fmt.Errorf("bits set past the /%d prefix: the network is %s", pfx.Bits(), m)
		}
		return ipaddr.FromNetip(pfx.Addr()), pfx.Bits(), nil
	}
	if a, err := ipaddr.ParseAddr(s); err == nil {
		return a, a.BitLen(), nil
	}
	parts := strings.Split(s, ".")
	if len(parts) <= 3 {
		var v uint32
		ok := true
		for _, x := range parts {
			o, err := strconv.ParseUint(x, 10, 8)
			if err != nil || x == "" || (len(x) > 1 && x[0] == '0') {
				ok = false
				break
			}
			v = v<<8 | uint32(o)
		}
		if ok {
			v <<= 8 * uint(4-len(parts))
			return ipaddr.FromUint32(v), 8 * len(parts), nil
		}
	}
	return ipaddr.Addr{}, 0, fmt.Errorf("not a network: want a CIDR such as 10.0.0.0/8 or 2001:db8::/32, an address, or 10.1 (a /16)")
}

// parseDSCP reads 0..63 or a DiffServ name: cs0..cs7 (8n), afXY (8X + 2Y, X 1..4,
// Y 1..3), ef (46), va (44), le (1).
func parseDSCP(s string) (int, bool) {
	if v, err := strconv.ParseUint(s, 10, 8); err == nil {
		return int(v), v < 64
	}
	switch {
	case s == "ef":
		return 46, true
	case s == "va":
		return 44, true
	case s == "le":
		return 1, true
	case len(s) == 3 && s[:2] == "cs" && s[2] >= '0' && s[2] <= '7':
		return 8 * int(s[2]-'0'), true
	case len(s) == 4 && s[:2] == "af" && s[2] >= '1' && s[2] <= '4' && s[3] >= '1' && s[3] <= '3':
		return 8*int(s[2]-'0') + 2*int(s[3]-'0'), true
	}
	return 0, false
}
