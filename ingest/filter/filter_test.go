package filter

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/tracegen"
)

// Packets the expressions below are checked against, each with the fields the
// filter reads set by hand.
var (
	tcpWeb = ingest.Packet{Src: ipaddr.MustParse("10.0.0.1"), Dst: ipaddr.MustParse("192.168.1.7"), Proto: 6, SrcPort: 49152, DstPort: 443, DSCP: 0}
	udpDNS = ingest.Packet{Src: ipaddr.MustParse("192.168.1.7"), Dst: ipaddr.MustParse("8.8.8.8"), Proto: 17, SrcPort: 5353, DstPort: 53, DSCP: 46}
	roce   = ingest.Packet{Src: ipaddr.MustParse("10.0.1.5"), Dst: ipaddr.MustParse("10.0.2.6"), Proto: 17, SrcPort: 50000, DstPort: 4791, DSCP: 26}
	ping   = ingest.Packet{Src: ipaddr.MustParse("10.0.0.1"), Dst: ipaddr.MustParse("10.0.0.2"), Proto: 1, DSCP: 24}
	// a non-first fragment of a UDP datagram: its ports are unknown (0)
	frag  = ingest.Packet{Src: ipaddr.MustParse("10.0.0.1"), Dst: ipaddr.MustParse("10.0.0.2"), Proto: 17, Fragment: true, FragOffset: 1480}
	tcp6  = ingest.Packet{Src: ipaddr.MustParse("2001:db8::1"), Dst: ipaddr.MustParse("2001:db8:1::2"), Proto: 6, SrcPort: 443, DstPort: 50000, DSCP: 10}
	icmp6 = ingest.Packet{Src: ipaddr.MustParse("fe80::1"), Dst: ipaddr.MustParse("ff02::1"), Proto: 58}
	// ICMP (protocol 1) inside IPv6 is not icmp (which is IPv4's) nor icmp6
	odd6   = ingest.Packet{Src: ipaddr.MustParse("2001:db8::1"), Dst: ipaddr.MustParse("2001:db8::2"), Proto: 1}
	mapped = ingest.Packet{Src: ipaddr.MustParse("::ffff:10.0.0.1"), Dst: ipaddr.MustParse("2001:db8::2"), Proto: 17, SrcPort: 1, DstPort: 2}
)

var packets = []struct {
	name string
	p    *ingest.Packet
}{{"tcpWeb", &tcpWeb}, {"udpDNS", &udpDNS}, {"roce", &roce}, {"ping", &ping}, {"frag", &frag}, {"tcp6", &tcp6}, {"icmp6", &icmp6}, {"odd6", &odd6}, {"mapped", &mapped}}

// TestMatch: each expression against every packet above; want lists the packets it
// keeps, worked out by hand from the rules of the package documentation.
func TestMatch(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{"tcp", []string{"tcpWeb", "tcp6"}},
		{"udp", []string{"udpDNS", "roce", "frag", "mapped"}},
		{"icmp", []string{"ping"}},
		{"icmp6", []string{"icmp6"}},
		{"icmpv6", []string{"icmp6"}},
		{"ip", []string{"tcpWeb", "udpDNS", "roce", "ping", "frag"}},
		{"ip6", []string{"tcp6", "icmp6", "odd6", "mapped"}},
		{"proto 1", []string{"ping", "odd6"}},
		{"ip proto 1", []string{"ping"}},
		{"ip6 proto icmp", []string{"odd6"}},
		{"proto udp", []string{"udpDNS", "roce", "frag", "mapped"}},
		{"host 10.0.0.1", []string{"tcpWeb", "ping", "frag"}}, // not ::ffff:10.0.0.1: another endpoint
		{"host ::ffff:10.0.0.1", []string{"mapped"}},
		{"10.0.0.1", []string{"tcpWeb", "ping", "frag"}},
		{"src host 10.0.0.1", []string{"tcpWeb", "ping", "frag"}},
		{"dst host 10.0.0.1", nil},
		{"src 192.168.1.7", []string{"udpDNS"}},
		{"src and dst net 10.0.0.0/16", []string{"roce", "ping", "frag"}},
		{"src and dst net 10.0.0.0/24", []string{"ping", "frag"}},
		{"src or dst net 10.0.0.0/16", []string{"tcpWeb", "roce", "ping", "frag"}},
		{"dst or src net 10.0.0.0/16", []string{"tcpWeb", "roce", "ping", "frag"}},
		{"net 10", []string{"tcpWeb", "roce", "ping", "frag"}},
		{"net 10.0.2", []string{"roce"}},
		{"net 192.168.0.0/16", []string{"tcpWeb", "udpDNS"}},
		{"dst net 192.168.0.0/16", []string{"tcpWeb"}},
		{"10.0.1.0/24", []string{"roce"}},
		{"net 2001:db8::/32", []string{"tcp6", "odd6", "mapped"}},
		{"ip6 net 2001:db8:1::/48", []string{"tcp6"}},
		{"net 0.0.0.0/0", []string{"tcpWeb", "udpDNS", "roce", "ping", "frag"}},
		{"net ::/0", []string{"tcp6", "icmp6", "odd6", "mapped"}},
		{"net 10.0.0.2", []string{"ping", "frag"}},
		{"port 443", []string{"tcpWeb", "tcp6"}},
		{"port 0", nil}, // the fragment's ports are unknown, not 0
		{"tcp port 443", []string{"tcpWeb", "tcp6"}},
		{"udp port 443", nil},
		{"tcp dst port 443", []string{"tcpWeb"}},
		{"tcp src port 443", []string{"tcp6"}},
		{"udp dst port 53 or 4791", []string{"udpDNS", "roce"}},
		{"portrange 4000-5000", []string{"roce"}},
		{"udp portrange 1-100", []string{"udpDNS", "mapped"}},
		{"ip port 443", []string{"tcpWeb"}},
		{"ip6 dst port 50000", []string{"tcp6"}},
		{"dscp 46", []string{"udpDNS"}},
		{"dscp ef", []string{"udpDNS"}},
		{"dscp af31", []string{"roce"}},
		{"dscp cs3", []string{"ping"}},
		{"dscp af11 or 46", []string{"udpDNS", "tcp6"}},
		{"dscp 0", []string{"tcpWeb", "frag", "icmp6", "odd6", "mapped"}},
		{"not tcp", []string{"udpDNS", "roce", "ping", "frag", "icmp6", "odd6", "mapped"}},
		{"!tcp", []string{"udpDNS", "roce", "ping", "frag", "icmp6", "odd6", "mapped"}},
		{"not not tcp", []string{"tcpWeb", "tcp6"}},
		{"tcp or icmp", []string{"tcpWeb", "ping", "tcp6"}},
		{"tcp || icmp", []string{"tcpWeb", "ping", "tcp6"}},
		{"udp and not port 53", []string{"roce", "frag", "mapped"}},
		{"udp && !port 53", []string{"roce", "frag", "mapped"}},
		{"(tcp or udp) and net 10.0.0.0/8", []string{"tcpWeb", "roce", "frag"}},
		{"host 10.0.0.1 and not 10.0.0.2", []string{"tcpWeb"}},
		{"host 10.0.0.1 or 8.8.8.8", []string{"tcpWeb", "udpDNS", "ping", "frag"}},
		{"(ip6 and tcp) or (ip and icmp)", []string{"ping", "tcp6"}},
		{"((tcp))", []string{"tcpWeb", "tcp6"}},
		{"tcp port 443 and (src net 10 or src net 2001:db8::/32)", []string{"tcpWeb", "tcp6"}},
		{"  tcp  ", []string{"tcpWeb", "tcp6"}},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			f, err := Parse(c.expr)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			for _, w := range c.want {
				want[w] = true
			}
			for _, pk := range packets {
				if got := f.Match(pk.p); got != want[pk.name] {
					t.Errorf("%s: Match = %v, want %v", pk.name, got, want[pk.name])
				}
			}
		})
	}
}

// TestSyntaxErrors pins the messages: the column and the token, the rule, and the
// fix.
func TestSyntaxErrors(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"", `column 1 (the end): empty expression (want a primitive such as tcp, host 10.0.0.1 or port 443)`},
		{"tcp and prot 80", `column 9, "prot": unknown word (did you mean port?)`},
		{"tcp and", `column 8 (the end): the expression ends after and: want a primitive`},
		{"host", `column 5 (the end): the expression ends after host: want an IPv4 or IPv6 address`},
		{"host example.com", `column 6, "example.com": not an IPv4 or IPv6 address (host names are not looked up)`},
		{"host 10.0.0.0/8", `column 6, "10.0.0.0/8": a network, not an address: write net 10.0.0.0/8`},
		{"net 10.0.0.1/8", `column 5, "10.0.0.1/8": bits set past the /8 prefix: the network is 10.0.0.0/8`},
		{"port http", `column 6, "http": not a port number 0..65535 (port names are not looked up)`},
		{"port 70000", `column 6, "70000": not a port number 0..65535 (port names are not looked up)`},
		{"portrange 5000-4000", `column 11, "5000-4000": not a port range A-B with 0 <= A <= B <= 65535`},
		{"dscp 64", `column 6, "64": not a DSCP: want 0..63 or cs0..cs7, af11..af43, ef, va, le`},
		{"tcp or udp and port 53", `column 12, "and": and after or (column 5) needs parentheses: write either (x or y) and z, or x or (y and z) (tcpdump reads and and or left to right, tshark binds and first)`},
		{"tcp port 80 or 10.0.0.1", `column 16, "10.0.0.1": not a port number 0..65535 (port names are not looked up) (a value alone repeats the previous primitive's qualifiers, tcp port)`},
		{"80", `column 1, "80": a number alone: say what it is (port 80, dscp 80, proto 80)`},
		{"tcp udp", `column 5, "udp": want and, or, or the end of the expression after a primitive`},
		{"(tcp", `column 5 (the end): want ) to close the ( of column 1`},
		{"tcp)", `column 4, ")": a ) without its (`},
		{"()", `column 2, ")": empty parentheses: want a primitive`},
		{"tcp & udp", `column 5, "&": a single &: write && (or and)`},
		{"tcp host 10.0.0.1", `column 5, "host": tcp qualifies port and portrange, not host: write tcp and host ...`},
		{"udp src", `column 8 (the end): the expression ends after udp src: want port or portrange`},
		{"icmp port 7", `column 6, "port": icmp takes no qualifiers (ICMP has no ports): write icmp and port ...`},
		{"ip host 2001:db8::1", `column 9, "2001:db8::1": an ipv6 address: ip host takes ipv4`},
		{"arp", `column 1, "arp": the filter sees IP packets only (ARP and other non-IP records are counted and skipped before it)`},
		{"tcp[13] = 2", `column 1, "tcp[13]": byte offsets are not supported: the filter sees the decoded fields (ports, protocol, DSCP)`},
		{"bogus", `column 1, "bogus": unknown word: want a primitive (host, net, port, portrange, tcp, udp, icmp, icmp6, ip, ip6, proto, dscp) or an address (host names are not looked up)`},
		{"not", `column 4 (the end): the expression ends after not: want a primitive`},
		{"and tcp", `column 1, "and": and where a primitive is wanted`},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			_, err := Parse(c.expr)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v, want a *SyntaxError", c.expr, err)
			}
			if err.Error() != c.want {
				t.Errorf("Parse(%q):\n got %s\nwant %s", c.expr, err, c.want)
			}
			if se.Expr != c.expr || se.Column < 1 || se.Column > len(c.expr)+1 {
				t.Errorf("Expr %q Column %d", se.Expr, se.Column)
			}
			if se.Token != "" && c.expr[se.Column-1:se.Column-1+len(se.Token)] != se.Token {
				t.Errorf("column %d does not hold %q", se.Column, se.Token)
			}
		})
	}
}

// Deep nesting is bounded (no stack exhaustion from hostile input).
func TestNestingBounded(t *testing.T) {
	deep := ""
	for i := 0; i < 1000; i++ {
		deep += "("
	}
	if _, err := Parse(deep + "tcp"); err == nil {
		t.Fatal("1000 nested parentheses accepted")
	}
	nots := ""
	for i := 0; i < 99; i++ {
		nots += "! "
	}
	f, err := Parse(nots + "tcp") // 99 nots: odd, so not tcp
	if err != nil || f.Match(&tcpWeb) || !f.Match(&udpDNS) {
		t.Fatalf("99 nots: %v", err)
	}
}

// BenchmarkMatch: one op is one Match of a typical expression; 0 allocations.
func BenchmarkMatch(b *testing.B) {
	f, err := Parse("(tcp port 443 or udp dst port 4791) and not net 192.168.0.0/16 and dscp 26")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	n := 0
	for i := 0; i < b.N; i++ {
		if f.Match(packets[i%len(packets)].p) {
			n++
		}
	}
	if n < 0 {
		b.Fatal(n)
	}
}

func TestMatchAllocs(t *testing.T) {
	f, err := Parse("(tcp port 443 or udp dst port 4791) and not net 192.168.0.0/16 and dscp 26")
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(1000, func() { f.Match(&roce) }); a != 0 {
		t.Fatalf("%v allocations per Match", a)
	}
}

// BenchmarkReadFiltered is ingest's per-packet path (read, decode, reorder) with a
// filter over a generated trace: one op is one packet the filter keeps, with the
// records it skipped before it; 0 allocations per op in steady state.
func BenchmarkReadFiltered(b *testing.B) {
	const n = 200_000
	path := filepath.Join(b.TempDir(), "bench.pcap")
	if _, err := tracegen.WriteBenchmarkFile(path, tracegen.Benchmark{Packets: n, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	f, err := Parse("udp dst port 4791 or (tcp and not net 10.0.0.0/16)")
	if err != nil {
		b.Fatal(err)
	}
	open := func() *ingest.Reader {
		r, err := ingest.Open([]string{path}, ingest.Options{Filter: f})
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	r := open()
	var p ingest.Packet
	kept := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ok, err := r.Next(&p)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			i--
			r.Close()
			r = open()
			continue
		}
		kept++
	}
	b.StopTimer()
	r.Close()
	if kept == 0 {
		b.Fatal("the filter kept nothing")
	}
}
