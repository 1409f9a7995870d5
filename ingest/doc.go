// Package ingest reads packet captures and turns them into a time-ordered stream
// of IP (IPv4 and IPv6) Packet values for the replay.
//
// # Files
//
// Classic pcap (microsecond and nanosecond magic, either byte order) and pcapng
// (several interfaces with different link types and if_tsresol; enhanced, simple
// and obsolete packet blocks), each plain or compressed with gzip, bzip2, xz or zstd:
// the format and the compression are recognised by content, never by file name, and
// decompressed as the file is read (compress.go). Formats recognised but not read
// (lz4, 7-Zip, zip, tar, RAR, lzip, compress, snappy) are errors that name the format
// and what to do ("lz4 frame: not supported; decompress first"). The path "-" reads
// Options.Stdin: standard input, which the command copies to a temporary file first
// when it is a pipe (a replay reads its capture twice). Reading uses gopacket's pure-Go pcapgo
// readers (ZeroCopyReadPacketData); for pcapng a validating guard checks every block
// before pcapgo sees it, because pcapgo trusts lengths (see ngguard.go).
//
// # Decoding
//
// Link types: Ethernet (1) with 802.1Q/802.1ad tags at any depth, raw IP (101: IPv4
// or IPv6 by the version nibble; 228 IPv4; 229 IPv6), Linux cooked SLL (113) and SLL2
// (276), BSD loopback NULL (0) and LOOP (108) with the address families 2 (IPv4) and
// 10, 24, 28, 30 (IPv6). EtherType 0x0800 is IPv4 and 0x86DD IPv6, after any VLAN
// tags. Only the OUTER IP header counts: tunnels (GRE, VXLAN, IP-in-IP, IPv6 in IPv4
// and the reverse), MPLS payloads and ICMP-quoted headers are not looked into, as a
// switch hashes on the outer header. Every other record is skipped and counted by
// Reason: "arp", "other-ethertype" (LLC, LLDP, MPLS, ..., or a link header cut by the
// snaplen), "unsupported-linktype", "truncated-ipv4-header" (fewer than 20 bytes of
// IPv4 header captured), "bad-ipv4-header" (version != 4, IHL < 5, total length
// shorter than the header), "truncated-ipv6-header" (fewer than the 40 bytes of the
// fixed IPv6 header captured), "bad-ipv6-header" (version != 6, or a Payload Length
// of 0: a jumbogram). These rules reproduce tshark's counts on the real captures in
// ../shared/pcaps (expected_test.go for IPv4, expected6_test.go for IPv6).
//
// IPv6 (docs/model.md#ipv6): DSCP and ECN come from the Traffic Class as from the
// IPv4 ToS byte; Packet.TotalLen is 40 + Payload Length. The upper-layer protocol and
// ports are found by walking the extension headers Hop-by-Hop (0), Routing (43),
// Fragment (44), Destination Options (60) and Authentication (51); a non-first
// fragment ends the walk with no ports, and ESP (50), No Next Header (59) or any other
// value ends it as the protocol. A chain that runs past the captured bytes (or the
// Payload Length) ends the walk with no ports; only a cut fixed header skips the
// packet. Packet.HeaderLen is where the upper-layer header starts (IHL*4 for IPv4).
//
// Addresses of both families are ipaddr.Addr values: 16 bytes (IPv4 as IPv4-mapped)
// and a family, comparable and pointer-free (internal/ipaddr). Options.Family keeps
// one family; the other's packets are counted "family-filtered". Options.Filter keeps
// the IP packets a filter expression matches (package ingest/filter, --filter); the
// others are counted "filtered".
//
// IP packets to a multicast group (224.0.0.0/4, ff00::/8) or to the limited broadcast
// address 255.255.255.255 (IGMP, SSDP, mDNS, NetBIOS, DHCP, MLD, neighbor discovery)
// are delivered like any IP packet, and Packet.Multicast says which they are: a
// data-center fabric model has no multicast routing, so a replay skips them (reason
// "multicast"), and Summarize counts them under that reason while keeping them in its
// IP counts and histograms.
//
// # Units
//
// Timestamps are int64 nanoseconds since the Unix epoch (UTC); sizes are bytes;
// Packet.TotalLen is the IPv4 total length or 40 + the IPv6 Payload Length from the
// header, so a snaplen-truncated capture keeps each packet's real size, and
// Packet.CapLen is what was captured.
// Ports are 0 for protocols other than TCP and UDP, for non-first fragments and when
// the capture cut the first 4 bytes of the L4 header off. Packet.Index counts ALL
// records of its file from 0 (tshark's frame number minus one).
//
// # Order
//
// Several files merge by timestamp (ties: the file listed first). Within a file,
// packets whose timestamps go backwards are put in order within
// Options.ReorderWindow (default 10 ms); a packet later than that is counted
// "out-of-order", reported through Options.Warn and skipped. FileStats.InOrder (and
// FileSummary.InOrder) tell that a file needed no reordering; a later pass over such
// a file can say so in Options.InOrder and skip the reorder buffer (same packets, less
// work and memory; the file then changing under it is an error). Summarize does this
// itself: it reads the files once without reordering and again with it only when a
// file turns out not to be in order.
//
// Options.Window keeps a time window of the merged capture, [start, start+duration),
// with the start an offset from the first IP packet or an absolute time; the IP
// packets outside it are counted "out-of-window" in their files and skipped.
//
// # Errors
//
// A corrupt file is a *FileError that wraps ErrCorrupt and names the file and the
// packet index and byte offset: bad magic or version; a record whose captured
// length exceeds MaxSnaplen (256 KiB) or its own original length; a pcapng block
// whose length is not a multiple of 4, exceeds 1 MiB (packet, section and
// interface blocks) or disagrees with its trailing copy; a captured length outside
// its block; an undeclared interface; options running past their block; an
// if_tsresol finer than 10^-19 or 2^-63 s; a corrupt compressed stream. A file that
// ends inside its last record (a record header or block whose lengths are plausible
// but whose bytes stop early, or a compressed stream cut short) is, as with tcpdump,
// a warning through Options.Warn, and the packets before it are used; with
// Options.Strict it is an error wrapping ErrTruncated (and ErrCorrupt). A compressed
// stream cut short loses the compression block it ends in (bzip2 and xz decode whole
// blocks: up to 900 kB for bzip2, and the whole file for a single-block xz, which is
// then an error for want of any packet). No input makes the package panic; memory per open file is
// bounded by about 2.5 MiB of buffers plus the reorder window's packets (48 bytes
// each, and 56 more for an IPv6 packet's addresses).
//
// # Performance
//
// The hot path (Reader.Next, Decode) allocates nothing per packet in steady state:
// pcapgo's buffers are reused, the decoder copies the few header fields it keeps
// into the Packet value (decoding straight into the reorder ring's free slot), and
// the ring is recycled. BenchmarkDecodeSummarize (one op = one packet) and
// BenchmarkSummarize (one op = a generated 1M-packet headers-only trace) measure
// it; they report packets/s (wall) and packets/cpu-s (CPU time, robust on a shared
// machine).
//
// # API
//
//	r, err := ingest.Open(paths, ingest.Options{Warn: func(m string) { log.Print(m) }})
//	defer r.Close()
//	var p ingest.Packet
//	for {
//		ok, err := r.Next(&p)
//		if err != nil || !ok { ... }
//		use(p.Timestamp, p.Tuple(), p.DSCP, p.ECN, p.TotalLen)
//	}
//	r.Files() // []FileStats: format, compression, link types, resolutions, counters
//
//	s, err := ingest.Summarize(paths, ingest.Options{}) // replay inspect
//	s.WriteText(os.Stdout)                               // or json.Marshal(s)
package ingest
