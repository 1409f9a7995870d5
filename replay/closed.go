package replay

import (
	"math"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel/transport"
)

// Closed-loop replay (docs/model.md#closed-loop-transports): which flows are re-sent
// by simulated senders, which captured packets those senders' receivers replace, and
// what the senders need to know of a flow before it starts.

// Replaced captured packets: control packets that closed-loop receivers generate
// themselves, so the captured ones are not injected (arrival.replaced).
const (
	notReplaced uint8 = iota
	replacedTCPAck
	replacedRoCEAck
	replacedRoCECNP
	numReplaced
)

var replacedNames = [numReplaced]string{"", "tcp-ack", "roce-ack", "roce-cnp"}

// RoCEv2 identification: UDP destination port 4791; the BTH opcode is the first byte
// of the UDP payload (InfiniBand RC: 0x11 acknowledge, which is also a NAK; 0x81 CNP).
const (
	roceUDPPort    = 4791
	bthAcknowledge = 0x11
	bthCNP         = 0x81
)

// closedLoop reports whether the run is closed loop.
func (pr *Prepared) closedLoop() bool { return pr.Opt.Config.Transport.Mode == config.TransportClosed }

// replacedKind says whether a closed-loop run replaces captured packet p: a TCP pure
// ACK (a captured header, no payload, none of SYN, FIN, RST) when TCP is closed loop,
// a RoCEv2 ACK/NAK or CNP when RoCE is. A header the capture cut counts as data.
func replacedKind(tr *config.Transport, p *ingest.Packet) uint8 {
	switch {
	case p.Proto == 6 && tr.Tcp != config.TcpOpen:
		if n, known := p.TCPPayload(); known && n == 0 && p.TCPFlags&(ingest.TCPSyn|ingest.TCPFin|ingest.TCPRst) == 0 {
			return replacedTCPAck
		}
	case p.Proto == 17 && p.DstPort == roceUDPPort && p.HasUDPPayload0 && tr.Roce != config.RoceOpen:
		switch p.UDPPayload0 {
		case bthAcknowledge:
			return replacedRoCEAck
		case bthCNP:
			return replacedRoCECNP
		}
	}
	return notReplaced
}

// everyControl classifies control packets as when every transport is closed loop:
// what is not data (docs/model.md#messages), whatever the run's settings.
var everyControl = config.Transport{Tcp: config.TcpAuto, Roce: config.RoceDcqcn}

// flowKind is the sender of a flow whose first packet is a, in a closed-loop run;
// auto reports a TCP flow whose kind its first data segment decides.
func flowKind(tr *config.Transport, a *arrival) (k transport.Kind, auto bool) {
	switch {
	case a.proto == 6 && !a.laterFrag:
		switch tr.Tcp {
		case config.TcpAuto:
			return transport.NewReno, true
		case config.TcpDctcp:
			return transport.DCTCP, false
		case config.TcpNewReno:
			return transport.NewReno, false
		}
	case a.proto == 17 && a.dport == roceUDPPort && !a.laterFrag && tr.Roce == config.RoceDcqcn:
		return transport.DCQCN, false
	}
	return transport.Open, false
}

// Fallback reasons (docs/model.md#application-model, run.json closed_loop.fallback):
// why a TCP or RoCEv2 flow that closed loop would re-send is replayed open loop
// instead. A per-flow inconsistency never stops a run: the flow falls back.
const (
	fallbackNone uint8 = iota
	// fallbackFragmented: the flow carries IP fragments (first fragments: the rest of
	// each datagram is a flow of its own, without ports), which a sender cannot
	// re-send as whole segments.
	fallbackFragmented
	// fallbackControlWithoutSender: every captured packet of the flow is a control
	// packet (TCP pure ACKs, RoCEv2 ACK/NAK/CNP) and the reverse direction has no
	// closed-loop sender whose receiver would generate them (the capture saw one
	// direction, or the reverse falls back itself): they are replayed as captured.
	fallbackControlWithoutSender
	// fallbackTooManySegments: more segments than a sender numbers (2^31 - 1).
	fallbackTooManySegments
	numFallbacks
)

// fallbackNames are the reasons' names in run.json.
var fallbackNames = [numFallbacks]string{"", records.FallbackFragmented, records.FallbackControlWithoutSender, records.FallbackTooManySegments}

// flowFacts is what the closed-loop pre-pass learns of a TCP or RoCEv2 flow before
// the run: what its sender needs (the SMSS) and what decides whether it falls back.
type flowFacts struct {
	mss        uint16 // the MSS option of its SYN (0: none captured)
	hdr        int32  // TCP: the largest header (IP and TCP, options included) of its segments with a payload
	maxLen     uint32 // the largest size L of its segments
	segments   int64  // captured packets that are segments (not control packets the receivers replace)
	fragmented bool   // one of its segments is an IP fragment
}

// closedFacts are the facts of a trace's TCP and RoCEv2 flows, learnt in the one
// pass over the capture (scan.go) whatever the run's transport: control packets are
// told apart as when every transport is closed loop, so the facts hold whatever
// Transport.Tcp and Transport.Roce say (the runs derived from a Prepared share them).
type closedFacts struct {
	tuples *tupleTable // the trace's 5-tuples (tuple ids)
	flows  []flowFacts // per tuple id (zero for a flow neither TCP nor RoCEv2)
	// roce holds the facts of the RoCEv2 address pairs (source, destination) with a
	// flow of segments: RoCEv2 sends its ACKs, NAKs and CNPs to UDP port 4791 from a
	// port of its own, so they are matched to their data by addresses, not by
	// reversed ports. pair is each tuple id's pair (-1: not RoCEv2), pairs the pairs'
	// indices.
	roce  []flowFacts
	pair  []int32
	pairs map[[2]ipaddr.Addr]int32
}

func newClosedFacts(tuples *tupleTable) *closedFacts {
	return &closedFacts{tuples: tuples, pairs: map[[2]ipaddr.Addr]int32{}}
}

// newTuple adds the facts of tuple id tid, first seen in packet p.
func (cf *closedFacts) newTuple(p *ingest.Packet) {
	cf.flows = append(cf.flows, flowFacts{})
	pair := int32(-1)
	if p.Proto == 17 && p.DstPort == roceUDPPort {
		k := [2]ipaddr.Addr{p.Src, p.Dst}
		var ok bool
		if pair, ok = cf.pairs[k]; !ok {
			pair = int32(len(cf.roce))
			cf.pairs[k] = pair
			cf.roce = append(cf.roce, flowFacts{})
		}
	}
	cf.pair = append(cf.pair, pair)
}

// add learns from packet p of tuple id tid, whose control kind (every transport
// closed loop) is ctl.
func (cf *closedFacts) add(p *ingest.Packet, tid int32, ctl uint8) {
	tcp, roce := p.Proto == 6, cf.pair[tid] >= 0
	if !tcp && !roce || ctl != notReplaced {
		return
	}
	ff := &cf.flows[tid]
	ff.segments++
	ff.maxLen = max(ff.maxLen, p.TotalLen)
	ff.fragmented = ff.fragmented || p.Fragment
	if n, _ := p.TCPPayload(); tcp && n > 0 {
		ff.hdr = max(ff.hdr, int32(p.TotalLen)-int32(n))
	}
	if tcp && p.TCPMSS != 0 && ff.mss == 0 {
		ff.mss = p.TCPMSS
	}
	if roce {
		pf := &cf.roce[cf.pair[tid]]
		pf.segments++
		pf.maxLen = max(pf.maxLen, p.TotalLen)
		pf.fragmented = pf.fragmented || p.Fragment
	}
}

// of returns the facts of the trace's flow t (zero for a flow not in the trace).
func (cf *closedFacts) of(t ingest.FiveTuple) flowFacts {
	if tid := cf.tuples.lookup(t); tid >= 0 {
		return cf.flows[tid]
	}
	return flowFacts{}
}

// pairOf returns the facts of the RoCEv2 address pair (src, dst).
func (cf *closedFacts) pairOf(src, dst ipaddr.Addr) flowFacts {
	if i, ok := cf.pairs[[2]ipaddr.Addr{src, dst}]; ok {
		return cf.roce[i]
	}
	return flowFacts{}
}

// decide is what becomes, in a closed-loop run, of a flow whose sender would be
// closed loop, at its first packet a (docs/model.md#application-model): re-sent
// (fallbackNone with segments), left out (fallbackNone, control only: its control
// packets are replaced by those the reverse direction's receiver generates), or
// replayed open loop for a reason. replaceControl says whether the flow's captured
// control packets are replaced: always for a re-sent flow; otherwise when the
// reverse direction has a closed-loop sender.
func (cf *closedFacts) decide(a *arrival, mtu int32) (reason uint8, segments int64, replaceControl bool) {
	ff := cf.of(a.tuple())
	var rev flowFacts
	if a.proto == 17 {
		rev = cf.pairOf(a.daddr, a.saddr)
	} else {
		rev = cf.of(ingest.FiveTuple{Src: a.daddr, Dst: a.saddr, SrcPort: a.dport, DstPort: a.sport, Proto: a.proto})
	}
	reverseSender := rev.segments > 0 && !rev.fragmented && !tooManySegments(rev, mtu)
	switch {
	case ff.fragmented:
		return fallbackFragmented, ff.segments, reverseSender
	case tooManySegments(ff, mtu):
		return fallbackTooManySegments, ff.segments, reverseSender
	case ff.segments == 0 && !reverseSender:
		return fallbackControlWithoutSender, 0, false
	}
	return fallbackNone, ff.segments, true
}

// smss is the SMSS of TCP flow t (the original capture's 5-tuple) in a run with the
// given MTU (docs/model.md#tcp): the MSS option of the reverse direction's SYN (what
// the receiver announced), else of the flow's own SYN, else mss (Transport.Mss) when
// set, else Mtu minus the flow's headers; never more than Mtu minus its headers, the
// largest payload an injected piece carries.
func (cf *closedFacts) smss(t ingest.FiveTuple, mtu, mss int32) int32 {
	ff := cf.of(t)
	hdr := ff.hdr
	if hdr == 0 { // no segment with a payload: fixed headers
		hdr = 40
		if t.Src.Is6() {
			hdr = 60
		}
	}
	limit := max(1, mtu-hdr)
	opt := cf.of(ingest.FiveTuple{Src: t.Dst, Dst: t.Src, SrcPort: t.DstPort, DstPort: t.SrcPort, Proto: t.Proto}).mss
	if opt == 0 {
		opt = ff.mss
	}
	switch {
	case opt != 0:
		return min(int32(opt), limit)
	case mss > 0:
		return min(mss, limit)
	}
	return limit
}

// tooManySegments reports whether a flow may have more segments than a sender
// numbers: its packets, each split into at most ceil(maxLen / MTU) pieces.
func tooManySegments(ff flowFacts, mtu int32) bool {
	pieces := max(1, (int64(ff.maxLen)+int64(mtu)-1)/int64(mtu))
	return ff.segments > math.MaxInt32/pieces
}
