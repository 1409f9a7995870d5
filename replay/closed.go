package replay

import (
	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/config"
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

// segmentSizes is the closed-loop pre-pass: the largest TCP payload of every flow
// (its SMSS, docs/model.md#tcp), read once from the whole capture.
func segmentSizes(opt *Options, sum *ingest.Summary) (map[ingest.FiveTuple]int32, error) {
	iopt := opt.ingestOptions()
	iopt.Warn = nil // Summarize reported them
	iopt.InOrder = sum.InOrderFiles()
	r, err := ingest.Open(opt.Traces, iopt)
	if err != nil {
		return nil, inputErrf("%w", err)
	}
	defer r.Close()
	smss := map[ingest.FiveTuple]int32{}
	var p ingest.Packet
	for {
		ok, err := r.Next(&p)
		if err != nil {
			return nil, inputErrf("%w", err)
		}
		if !ok {
			return smss, nil
		}
		if n, _ := p.TCPPayload(); p.Proto == 6 && n > 0 {
			k := p.Tuple()
			if int32(n) > smss[k] {
				smss[k] = int32(n)
			}
		}
	}
}
