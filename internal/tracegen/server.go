package tracegen

import (
	"net/netip"
	"time"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Captures returns the stand-ins for real captures committed under testdata/pcaps:
// traces shaped like what a user captures at one point of a network, not like the
// fabric-shaped Committed ones (README "Bring your own capture"). They keep none of
// Committed's conventions (addresses 10.P.R.(h+1), one /24 per rack, the classes of
// the package doc).
func Captures() []*Scenario { return []*Scenario{ServerCapture()} }

// The roles of server.pcap (ServerCapture): one storage server's port, captured with
// tcpdump, on a LAN whose every endpoint is in 192.168.40.0/24.
var (
	// ServerAddr is the server the capture was taken on: every unicast packet of the
	// trace is to or from it (one vantage point).
	ServerAddr = netip.MustParseAddr("192.168.40.10")
	// ServerPeer is a second storage node the server replicates to (DSCP 24, CS3).
	ServerPeer = netip.MustParseAddr("192.168.40.11")
	// ServerGateway is the LAN's gateway and DNS resolver.
	ServerGateway = netip.MustParseAddr("192.168.40.1")
	// ServerMDNS is the mDNS group some clients announce to (multicast: not replayed).
	ServerMDNS = netip.MustParseAddr("224.0.0.251")
)

// ServerClients are server.pcap's 13 clients, 192.168.40.21 to .33: the first 8
// write backups, ServerReaders read, the last is seen only through the server's ACKs.
func ServerClients() []netip.Addr {
	out := make([]netip.Addr, 13)
	for i := range out {
		out[i] = netip.AddrFrom4([4]byte{192, 168, 40, byte(21 + i)})
	}
	return out
}

// ServerCapture times, from the capture's first packet.
const (
	ServerBackupDuration = 6 * ms                   // the backup writes run from 0 for about this long
	ServerReadsAt        = 20 * units.Second        // the reads, the replication and the requests start here
	ServerReadsDuration  = 5 * ms                   // for about this long
	ServerEnd            = 23*units.Second + 800*ms // the last DNS exchange
)

// Classes of server.pcap (DSCP, docs/model.md#classification).
const (
	ServerBackupDSCP = 10 // AF11: the backup writes and the server's ACKs of them (TC1)
	ServerSyncDSCP   = 24 // CS3: the replication to ServerPeer (TC3, lossless by default)
)

// ServerCapture is server.pcap: 23.8 s of a capture taken on one storage server
// (ServerAddr) on a LAN with a 9000-byte MTU, shaped like what tcpdump shows there
// rather than like a fabric (README "Bring your own capture"; testdata/pcaps/README.md
// tables every flow):
//
//   - 0 to about 6 ms: 8 clients write backups to the server (TCP to port 2049,
//     DSCP 10, ECT(0)), already running when the capture began (data first, no SYN,
//     no FIN), in bursts of 8 jumbo frames at their 10 Gb/s NICs averaging 2.5 Gb/s
//     each; the server's pure ACKs go back, one every 57.8 us. The server also ACKs a
//     13th client whose data never crosses this port (a bonded link's other member
//     carries it): ACKs with no data the other way.
//   - 20 s: 4 clients open connections (SYN, SYN-ACK, ACK), read 16-frame bursts at
//     25 Gb/s averaging 5 Gb/s each for about 5 ms, with their ACKs, and close them
//     (FIN); the server replicates to ServerPeer at a steady 8 Gb/s, marked CS3
//     (DSCP 24), Not-ECT, mid-connection, its ACKs coming back; and 60 requests of
//     300 bytes from the clients to port 443 get 3 x 1500-byte answers.
//   - In between and after: DNS queries to the gateway (1.5 s, 7 s, 13 s, 19 s,
//     23.8 s) and mDNS announcements from a client (3 s, 11 s, 17 s): the capture is
//     idle for most of its 23.8 s.
func ServerCapture() *Scenario {
	tcp, udp := layers.IPProtocolTCP, layers.IPProtocolUDP
	ack := MinLength(tcp, false)
	clients := ServerClients()
	s := ServerAddr
	var flows FlowList

	// The backups: bursts of 16 x 9000 B at 10 Gb/s (115.7 us), a burst every
	// 289 us on average (4 Gb/s), 21 bursts; one server ACK every 36.2 us (every
	// second segment on average).
	for i, c := range clients[:12] {
		port := uint16(900 + i)
		flows = append(flows,
			Flow{Src: c, Dst: s, Proto: tcp, SrcPort: port, DstPort: 2049, DSCP: ServerBackupDSCP, ECN: ECT0,
				Start: units.Time(i) * 7 * us, Packets: 16 * 21, Length: MaxLength, Rate: 10 * units.Gbps, Burst: 16, BurstGap: 173 * us},
			Flow{Src: s, Dst: c, Proto: tcp, SrcPort: 2049, DstPort: port, DSCP: ServerBackupDSCP, ECN: NotECT, TCPFlags: TCPAck,
				Start: 30*us + units.Time(i)*7*us, Packets: 168, Length: ack, Interval: 36200 * units.Nanosecond})
	}
	// ACKs to the 13th client, whose data this port does not see.
	flows = append(flows, Flow{Src: s, Dst: clients[12], Proto: tcp, SrcPort: 2049, DstPort: 912, DSCP: ServerBackupDSCP, ECN: NotECT,
		TCPFlags: TCPAck, Start: 20 * us, Packets: 120, Length: ack, Interval: 50 * us})

	// The reads at 20 s: a handshake, 21 bursts of 16 x 9000 B at 25 Gb/s (46.3 us)
	// every 385 us on average (3 Gb/s), the client's ACKs every 48.2 us, then FINs.
	one := func(src, dst netip.Addr, sport, dport uint16, at units.Time, flags uint8) Flow {
		return Flow{Src: src, Dst: dst, Proto: tcp, SrcPort: sport, DstPort: dport, ECN: NotECT, Start: at, Packets: 1,
			Length: ack, Interval: 1, TCPFlags: flags}
	}
	t0 := ServerReadsAt
	for j, c := range clients[:4] {
		port := uint16(41000 + j)
		at := t0 + units.Time(j)*5*us
		flows = append(flows,
			one(c, s, port, 2049, at, TCPSyn),
			one(s, c, 2049, port, at+20*us, TCPSyn|TCPAck),
			one(c, s, port, 2049, at+40*us, TCPAck),
			Flow{Src: s, Dst: c, Proto: tcp, SrcPort: 2049, DstPort: port, ECN: ECT0, Start: at + 60*us,
				Packets: 16 * 13, Length: MaxLength, Rate: 25 * units.Gbps, Burst: 16, BurstGap: 339 * us},
			Flow{Src: c, Dst: s, Proto: tcp, SrcPort: port, DstPort: 2049, ECN: NotECT, TCPFlags: TCPAck,
				Start: at + 90*us, Packets: 104, Length: ack, Interval: 48200 * units.Nanosecond},
			one(s, c, 2049, port, at+ServerReadsDuration+400*us, TCPFin|TCPAck),
			one(c, s, port, 2049, at+ServerReadsDuration+420*us, TCPFin|TCPAck),
			one(s, c, 2049, port, at+ServerReadsDuration+440*us, TCPAck))
	}
	// The replication: 6 Gb/s of 9000 B (12.05 us apart) for 5 ms, CS3, its ACKs
	// every second segment.
	flows = append(flows,
		Flow{Src: s, Dst: ServerPeer, Proto: tcp, SrcPort: 33000, DstPort: 7000, DSCP: ServerSyncDSCP, ECN: NotECT,
			Start: t0 + 15*us, Packets: 415, Length: MaxLength, Rate: 6 * units.Gbps},
		Flow{Src: ServerPeer, Dst: s, Proto: tcp, SrcPort: 7000, DstPort: 33000, DSCP: ServerSyncDSCP, ECN: NotECT, TCPFlags: TCPAck,
			Start: t0 + 40*us, Packets: 207, Length: ack, Interval: 24100 * units.Nanosecond})

	// DNS to the gateway, mDNS announcements.
	for k, at := range []units.Time{1500 * ms, 7 * units.Second, 13 * units.Second, 19 * units.Second, ServerEnd} {
		port := uint16(53100 + k)
		flows = append(flows,
			Flow{Src: s, Dst: ServerGateway, Proto: udp, SrcPort: port, DstPort: 53, Start: at - 300*us, Packets: 1, Length: 76, Interval: 1},
			Flow{Src: ServerGateway, Dst: s, Proto: udp, SrcPort: 53, DstPort: port, Start: at, Packets: 1, Length: 180, Interval: 1})
	}
	for _, at := range []units.Time{3 * units.Second, 11 * units.Second, 17 * units.Second} {
		flows = append(flows, Flow{Src: clients[4], Dst: ServerMDNS, Proto: udp, SrcPort: 5353, DstPort: 5353, Start: at, Packets: 1, Length: 120, Interval: 1})
	}

	requests := &RequestResponse{Start: t0 + 100*us, Spacing: 80 * us, Clients: clients, Servers: []netip.Addr{s}, Pairs: 60,
		Request: 300, Response: 3, Length: 1500, Rate: 10 * units.Gbps, ECN: ECT0}
	return &Scenario{Name: "server.pcap", Seed: 11, Epoch: time.Date(2025, time.November, 3, 2, 0, 0, 0, time.UTC),
		Snaplen: DefaultSnaplen, Generators: []Generator{flows, requests}}
}
