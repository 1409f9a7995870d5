// Package tracegen writes synthetic, deterministic packet traces: the small captures
// committed under testdata/pcaps (demo, incast, many-flows, tcp-incast, ipv6 and mixed
// with IPv6 packets, midconn with flows caught mid-connection) and the large ones that
// benchmarks generate on the fly. Compress and CompressFile wrap a trace in gzip,
// bzip2, xz, zstd or lz4, as captures are shipped: the fixtures of ingest's
// decompression tests, generated in each test's temporary directory.
//
// # What it models
//
// A Scenario is a list of Generators (background mix, N-to-1 incast, steady streams,
// many flows between two halves of the address space). Each generator expands into
// Flows; a Flow is a paced sequence of IPv4 or IPv6 packets of one 5-tuple, DSCP and
// ECN codepoint. The scenario merges every flow by time and writes a classic pcap file
// (nanosecond resolution, Ethernet link type) with a short snaplen: only the first
// Snaplen bytes of each frame are captured (headers), while the IPv4 total length and
// the record's original length carry the packet's real size, up to 9000-byte jumbo
// frames. A trace of tens of thousands of 9000-byte packets therefore stays a few MB.
//
// Frames are built with gopacket/layers: Ethernet, IPv4 (DF set, TTL 64, ID 0), then
// TCP or UDP, then an all-zero payload of the real length, serialized with lengths
// and checksums computed, and cut to Snaplen. The TCP and UDP checksums are therefore
// those of the real-length packet (zero payload), and the IPv4 total length is the
// real size. MAC addresses are 02:00 followed by the IPv4 address (locally
// administered).
//
// # Traffic classes (docs/model.md#classification: TC = DSCP >> 3 under the default map)
//
//	RoCEv2     UDP, dport 4791, DSCP 26 (TC3, lossless by default), ECT(0)
//	TCPData    TCP, DSCP 0 (TC0, lossy), ECT(0)
//	Expedited  UDP, DSCP 46 (TC5, lossy), Not-ECT (voice/telemetry)
//	UDPData    UDP, DSCP 0 (TC0), Not-ECT
//
// # Units and time
//
// Flow times are units.Time (int64 picoseconds since the scenario's Epoch); pacing
// rates are units.BitRate counted on wire bytes (IPv4 total length + 38: Ethernet
// header, FCS, preamble and inter-frame gap, docs/model.md#units-and-conventions), so a flow at 100 Gb/s is exactly
// at the line rate of a 100 Gb/s host link. Packet lengths are IPv4 total lengths in
// bytes. When written, a time is rounded up to whole nanoseconds, and a timestamp that
// would not be strictly after the previous packet's is moved 1 ns after it: packets in
// a file are strictly time-ordered. A Scenario with Ties keeps equal timestamps
// instead (a Backlog's flows, whose packets are all available at once: Flow.AtOnce).
//
// # Validation scenarios
//
// Validation lists the scenarios of testdata/validation, the traces of
// docs/validation.md's cross-checks with other simulators: HPCCS1, the 16-to-1 DCQCN
// incast compared with HPCC's ns-3 (one switch of 17 hosts, every packet at t = 0),
// and its lone flow.
//
// # Addresses
//
// HostAddr(pod, rack, host) is 10.pod.rack.(host+1), HostAddr6(pod, rack, host)
// fd00:0:pod:rack::(host+1) (IPv6 packets: no extension headers, hop limit 64, sizes
// L = 40 + payload length, snaplen Snaplen6 so the TCP header fits; DualStackHosts
// explains where the subnet mapping puts both addresses of mixed.pcap's hosts). With
// every rack's /24 present in
// a trace, the default subnet host mapping (docs/model.md#replay: endpoints sorted, grouped by /24,
// group i to rack i mod 8) puts 10.P.R.x into rack pR of pod P of the default 2 pods x
// 4 racks x 16 hosts Clos, and when hosts 1..k of a /24 are all present, 10.P.R.(h+1)
// is host-pP-rR-hh. Every committed scenario uses all eight /24s.
//
// # Determinism
//
// All randomness comes from math/rand/v2 PCG generators derived from the scenario's
// Seed: generator g (0-based) draws from PCG(Seed, g+1) and flow f (0-based, in
// expansion order) draws its burst gaps from PCG(Seed, 1<<32 + f). The same scenario
// gives the same bytes on any machine (the package's own floating-point expressions
// round every product explicitly, so no fused multiply-add changes a draw); a test
// regenerates every committed file and compares it byte for byte.
//
// # Benchmark traces
//
// WriteBenchmark is the fast path for large traces (1 M, 4 M packets): a fixed set of
// flows over the 128 default hosts, Poisson arrivals at a given aggregate load, each
// packet a copy of a per-flow, per-size frame template (built once with the same
// gopacket encoder) with its TCP sequence number and checksum patched.
package tracegen
