// Package filter is the capture filter of `replay run`, `inspect` and `sweep`
// (--filter): a tcpdump-style expression evaluated on each decoded IP packet
// (ingest.Packet: the outer IPv4 or IPv6 header, its upper-layer protocol after the
// IPv6 extension headers, ports, DSCP), not on the frame's bytes, so that it means
// what the replay simulates whatever the link type (VLAN tags, SLL, raw IP).
//
// Why not a BPF compiler: libpcap's pcap_compile needs cgo, which tracefabric refuses;
// pure-Go BPF compilers (github.com/packetcap/go-pcap/filter, a wasm build of
// libpcap) compile to BPF over Ethernet frame bytes, which would mean running a BPF
// machine per packet on every link type, with libpcap's own rules (`tcp` on IPv6 sees
// only the first Next Header) and its one-word errors ("syntax error"). This package
// is a small parser over the fields the replay already decodes, with errors that
// point at the bad token.
//
// # Grammar
//
//	expr      = term { ("and" | "&&") term }     (one operator per level:
//	          | term { ("or" | "||") term }       mix and/or only with parentheses)
//	term      = ("not" | "!") term | "(" expr ")" | primitive
//	primitive = [family] [dir] kind VALUE          host / net / port / portrange
//	          | ("tcp" | "udp") [dir] ("port" | "portrange") VALUE
//	          | [family] "proto" PROTO
//	          | "tcp" | "udp" | "icmp" | "icmp6" | "ip" | "ip6"
//	          | "dscp" DSCP
//	          | [dir] ADDRESS | [dir] NET          (host or net, from the value)
//	          | VALUE                               (the previous primitive's qualifiers)
//	family    = "ip" | "ip6"
//	dir       = "src" | "dst" | "src or dst" | "src and dst"
//	kind      = "host" | "net" | "port" | "portrange"
//
// Words are case-sensitive, lower case, as in tcpdump. A word runs to the next space
// or one of ( ) ! & |.
//
// Meanings, on the packet's outer IP header:
//
//   - host A: the source or destination address is A (an IPv4 dotted quad or IPv6 text;
//     names are not looked up). An IPv4 address never matches an IPv6 packet, and
//     ::ffff:10.0.0.1 is an IPv6 address, as in the rest of the replay.
//   - net N: the address is in N: a CIDR (10.0.0.0/8, 2001:db8::/32, with no bits set
//     past the prefix), an address (a /32 or /128), or tcpdump's short IPv4 forms
//     10, 10.1, 10.1.2 (/8, /16, /24).
//   - port P, portrange A-B: a TCP or UDP packet, not a non-first fragment, whose
//     source or destination port is P (in A..B). A capture that cut the L4 header
//     off gives ports 0 (docs/model.md#ecmp-hashing). tcp port, udp port restrict it
//     to one protocol.
//   - src, dst: the source, the destination; "src or dst" (the default) either,
//     "src and dst" both.
//   - ip, ip6: the packet is IPv4, IPv6; before host, net, port or proto they restrict
//     that primitive to the family (ip proto 1).
//   - tcp (6), udp (17): the upper-layer protocol, IPv4 and IPv6 (for IPv6, the Next
//     Header that ends the extension headers, docs/model.md#ipv6); non-first fragments
//     included. icmp is ICMP for IPv4 (protocol 1 in an IPv4 packet); ICMPv6 is icmp6
//     (also icmpv6: 58 in an IPv6 packet), as in tcpdump and tshark, which both keep
//     the two apart.
//   - proto P: the upper-layer protocol is P, 0..255 or one of tcp, udp, icmp, icmp6,
//     igmp, gre, esp, ah, sctp.
//   - dscp D: the DSCP is D, 0..63 or a name: cs0..cs7, af11..af43, ef, va, le.
//   - not, and, or with parentheses; && || ! are the same operators.
//
// Decisions where tcpdump differs or is silent:
//
//   - tcpdump gives "and" and "or" equal precedence, left to right (a or b and c is
//     (a or b) and c), while tshark and C bind "and" first. An expression that mixes
//     them at one level is refused with an error at the operator asking for
//     parentheses, rather than guessing either way.
//   - A value after and/or/not without qualifiers takes the previous primitive's
//     (tcpdump's abbreviation): "tcp port 80 or 443" is "tcp port 80 or tcp port
//     443", "host a and not b" is "host a and not host b"; "dscp 10 or 12" too.
//   - tcp or udp before host or net is refused (it qualifies ports); icmp and icmp6
//     take no qualifiers.
//   - "filtered" packets (not matched) are counted under that reason in run.json's
//     trace.skipped and inspect's skipped, so that every packet of a capture is
//     replayed or counted.
//
// # Errors
//
// Parse returns a *SyntaxError: the 1-based column (in bytes) and the token where the
// expression went wrong, and the rule, with a suggestion for a misspelt word ("prot":
// did you mean port?).
//
// # Performance
//
// Match walks a compiled tree of nodes held in one slice: no allocation per packet
// (BenchmarkMatch).
package filter
