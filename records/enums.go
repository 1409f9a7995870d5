package records

import "fmt"

// The fixed enumerations of the record files. Each is stored in the files as a
// dictionary<int32, utf8> column whose dictionary is the enumeration's names in the
// order of its constants, written once per file (see the package documentation).

// Reason is why a packet was dropped (docs/model.md#shared-buffer, docs/model.md#replay).
type DropReason uint8

const (
	// ReasonHeadroom: a lossless arrival found its port's headroom full (a sizing failure).
	ReasonHeadroom DropReason = iota
	// ReasonEgressLimit: a lossy arrival would exceed its egress queue's limit.
	ReasonEgressLimit
	// ReasonPoolFull: a lossy arrival did not fit in its shared pool.
	ReasonPoolFull
	// ReasonOversize: a packet longer than the MTU, dropped at its source host under
	// `--oversize drop`.
	ReasonOversize
	// ReasonNoRoute: a switch had no live next hop for the packet's destination (a
	// failure's local repair left none; docs/model.md#failures-and-operations).
	ReasonNoRoute
	// ReasonLinkDown: on a link that went down, queued for it, or routed to it before
	// local repair (docs/model.md#failures-and-operations).
	ReasonLinkDown
	// ReasonPFCWatchdog: discarded by the PFC watchdog's drop action
	// (docs/model.md#pfc-watchdog).
	ReasonPFCWatchdog
	// NumReasons is the number of drop reasons.
	NumDropReasons = iota
)

var reasonNames = [NumDropReasons]string{"headroom", "egress-limit", "pool-full", "oversize", "no-route", "link-down", "pfc-watchdog"}

// Tier is the role of a node in the Clos (docs/model.md#clos-builder); hosts are a tier of their own.
type Tier uint8

const (
	TierHost Tier = iota
	TierRack
	TierFabric
	TierSpine
	// NumTiers is the number of tiers.
	NumTiers = iota
)

var tierNames = [NumTiers]string{"host", "rack", "fabric", "spine"}

// PFCEvent is what happened to a PFC frame or a pause timer (docs/model.md#priority-flow-control).
type PFCEventKind uint8

const (
	// EventTxPause: the node sent a PFC frame with quanta > 0 for the class.
	EventTxPause PFCEventKind = iota
	// EventTxResume: the node sent a PFC frame with quanta 0 for the class.
	EventTxResume
	// EventRxPause: the node received quanta > 0 for the class and stops sending it.
	EventRxPause
	// EventRxResume: the node received quanta 0 for the class and resumes it at once.
	EventRxResume
	// EventExpire: the node's pause timer for the class ran out without a resume (or
	// its link went down).
	EventExpire
	// EventStormDetected: the PFC watchdog found the port's class paused with
	// packets waiting for DetectionTime (docs/model.md#pfc-watchdog).
	EventStormDetected
	// EventStormRestored: RestorationTime passed without a pause frame: the watchdog
	// restores the class.
	EventStormRestored
	// EventDeadlock: the port's paused class is on a cycle of the wait-for graph of
	// paused ports (a PFC deadlock, docs/model.md#pfc-deadlock); one row per port of
	// the cycle, at its detection.
	EventDeadlock
	// EventDeadlockResolved: a port of the cycle resumed: the deadlock is over (one
	// row per port of the cycle).
	EventDeadlockResolved
	// NumPFCEventKinds is the number of PFC events.
	NumPFCEventKinds = iota
)

var pfcEventNames = [NumPFCEventKinds]string{"tx_pause", "tx_resume", "rx_pause", "rx_resume", "expire",
	"storm_detected", "storm_restored", "deadlock", "deadlock_resolved"}

// Fate is how a simulated packet's journey ended.
type Fate uint8

const (
	// FateDelivered: the packet reached its destination host.
	FateDelivered Fate = iota
	// FateDropped: a switch (or its source host, for oversize) dropped the packet.
	FateDropped
	// FateUndrained: the packet was still buffered when the simulation stopped.
	FateUndrained
	// NumFates is the number of fates.
	NumFates = iota
)

var fateNames = [NumFates]string{"delivered", "dropped", "undrained"}

// HashMethod is an ECMP hash method (docs/model.md#ecmp-hashing), spelled as in the configuration.
type HashMethod uint8

const (
	HashCRC32 HashMethod = iota
	HashCRC32WithSalt
	HashCRC16
	HashCRC16CCITT
	HashXor16
	HashToeplitz
	// NumHashMethods is the number of hash methods.
	NumHashMethods = iota
)

var hashMethodNames = [NumHashMethods]string{"crc32", "crc32WithSalt", "crc16", "crc16Ccitt", "xor16", "toeplitz"}

// Transport is a flow's sender (docs/model.md#closed-loop-transports).
type Transport uint8

const (
	// TransportOpen: the flow's captured packets entered at their captured times.
	TransportOpen Transport = iota
	// TransportNewReno: re-sent by a TCP NewReno sender (closed loop).
	TransportNewReno
	// TransportDCTCP: re-sent by a TCP DCTCP sender (closed loop).
	TransportDCTCP
	// TransportDCQCN: re-sent by a RoCEv2 DCQCN sender (closed loop).
	TransportDCQCN
	// NumTransports is the number of transports.
	NumTransports = iota
)

var transportNames = [NumTransports]string{"open", "newreno", "dctcp", "dcqcn"}

// PacketKind is what a dropped packet was: data, or a transport's control packet.
type PacketKind uint8

const (
	// KindData: a data packet (captured, or a closed-loop sender's segment).
	KindData PacketKind = iota
	// KindAck: a receiver's acknowledgement (TCP ACK, RoCE ACK).
	KindAck
	// KindCNP: a RoCEv2 congestion notification packet.
	KindCNP
	// KindNAK: a RoCE negative acknowledgement.
	KindNAK
	// NumPacketKinds is the number of packet kinds.
	NumPacketKinds = iota
)

var packetKindNames = [NumPacketKinds]string{"data", "ack", "cnp", "nak"}

// Completion is how a flow ended.
type Completion uint8

const (
	// CompletionComplete: every byte of the flow reached its destination, each once.
	CompletionComplete Completion = iota
	// CompletionDropped: open loop: some of its packets were dropped (never resent).
	CompletionDropped
	// CompletionUndrained: some of its packets were still in the fabric at the end.
	CompletionUndrained
	// CompletionMaxDrain: closed loop: its sender still had data to send or resend
	// when the run stopped at --max-drain.
	CompletionMaxDrain
	// NumCompletions is the number of completions.
	NumCompletions = iota
)

var completionNames = [NumCompletions]string{"complete", "dropped", "undrained", "max-drain"}

// TransportEventKind is a closed-loop congestion-control event (transport.arrow).
type TransportEventKind uint8

const (
	// EventCNP: a receiver sent a CNP to a DCQCN sender.
	EventCNP TransportEventKind = iota
	// EventRateCut: a DCQCN sender cut its rate (value: the new rate, bit/s).
	EventRateCut
	// EventRateIncrease: a DCQCN sender raised its rate (value: the new rate, bit/s).
	EventRateIncrease
	// EventWindowCut: a DCTCP sender cut its window on ECE (value: the new cwnd, bytes).
	EventWindowCut
	// EventFastRetransmit: a TCP sender entered fast recovery (value: the new cwnd, bytes).
	EventFastRetransmit
	// EventTimeout: a TCP retransmission timeout or a RoCE timeout (value: TCP's new
	// cwnd in bytes, 0 for RoCE).
	EventTimeout
	// NumTransportEventKinds is the number of transport event kinds.
	NumTransportEventKinds = iota
)

var transportEventNames = [NumTransportEventKinds]string{"cnp", "rate_cut", "rate_increase", "window_cut", "fast_retransmit", "timeout"}

func (k TransportEventKind) String() string { return enumString(transportEventNames[:], k) }

// ParseTransportEventKind returns the TransportEventKind named s (for example "rate_cut").
func ParseTransportEventKind(s string) (TransportEventKind, error) {
	return parseEnum[TransportEventKind]("transport event", transportEventNames[:], s)
}

// enumString is the String method of every enumeration.
func enumString[E ~uint8](names []string, e E) string {
	if int(e) < len(names) {
		return names[e]
	}
	return fmt.Sprintf("%T(%d)", e, uint8(e))
}

// parseEnum finds s among names; what names the enumeration in the error.
func parseEnum[E ~uint8](what string, names []string, s string) (E, error) {
	for i, n := range names {
		if n == s {
			return E(i), nil
		}
	}
	return 0, fmt.Errorf("records: unknown %s %q (known: %q)", what, s, names)
}

// marshalEnum is the MarshalText method of every enumeration: unknown values are an error.
func marshalEnum[E ~uint8](what string, names []string, e E) ([]byte, error) {
	if int(e) >= len(names) {
		return nil, fmt.Errorf("records: %s %d out of range [0,%d)", what, uint8(e), len(names))
	}
	return []byte(names[e]), nil
}

func (r DropReason) String() string   { return enumString(reasonNames[:], r) }
func (t Tier) String() string         { return enumString(tierNames[:], t) }
func (e PFCEventKind) String() string { return enumString(pfcEventNames[:], e) }
func (f Fate) String() string         { return enumString(fateNames[:], f) }
func (h HashMethod) String() string   { return enumString(hashMethodNames[:], h) }
func (t Transport) String() string    { return enumString(transportNames[:], t) }
func (k PacketKind) String() string   { return enumString(packetKindNames[:], k) }
func (c Completion) String() string   { return enumString(completionNames[:], c) }

// ParseTransport returns the Transport named s (for example "dctcp").
func ParseTransport(s string) (Transport, error) {
	return parseEnum[Transport]("transport", transportNames[:], s)
}

// ParsePacketKind returns the PacketKind named s (for example "ack").
func ParsePacketKind(s string) (PacketKind, error) {
	return parseEnum[PacketKind]("packet kind", packetKindNames[:], s)
}

// ParseCompletion returns the Completion named s (for example "max-drain").
func ParseCompletion(s string) (Completion, error) {
	return parseEnum[Completion]("completion", completionNames[:], s)
}

func (k PacketKind) MarshalText() ([]byte, error) {
	return marshalEnum("packet kind", packetKindNames[:], k)
}
func (k *PacketKind) UnmarshalText(b []byte) (err error) {
	*k, err = ParsePacketKind(string(b))
	return
}

// Column is the reason's column in ports.arrow: drops_headroom, drops_egress_limit, ...
func (r DropReason) Column() string { return "drops_" + snake(r.String()) }

// ParseDropReason returns the Reason named s (for example "egress-limit").
func ParseDropReason(s string) (DropReason, error) {
	return parseEnum[DropReason]("drop reason", reasonNames[:], s)
}

// ParseTier returns the Tier named s (for example "fabric").
func ParseTier(s string) (Tier, error) { return parseEnum[Tier]("tier", tierNames[:], s) }

// ParsePFCEventKind returns the PFCEvent named s (for example "rx_pause").
func ParsePFCEventKind(s string) (PFCEventKind, error) {
	return parseEnum[PFCEventKind]("PFC event", pfcEventNames[:], s)
}

// ParseFate returns the Fate named s (for example "undrained").
func ParseFate(s string) (Fate, error) { return parseEnum[Fate]("fate", fateNames[:], s) }

// ParseHashMethod returns the HashMethod named s (for example "crc32WithSalt").
func ParseHashMethod(s string) (HashMethod, error) {
	return parseEnum[HashMethod]("hash method", hashMethodNames[:], s)
}

// Text marshalling lets run.json carry the names: Reason is a map key there.

func (r DropReason) MarshalText() ([]byte, error) {
	return marshalEnum("drop reason", reasonNames[:], r)
}
func (t Tier) MarshalText() ([]byte, error) { return marshalEnum("tier", tierNames[:], t) }
func (h HashMethod) MarshalText() ([]byte, error) {
	return marshalEnum("hash method", hashMethodNames[:], h)
}

func (r *DropReason) UnmarshalText(b []byte) (err error) {
	*r, err = ParseDropReason(string(b))
	return
}
func (t *Tier) UnmarshalText(b []byte) (err error) { *t, err = ParseTier(string(b)); return }
func (h *HashMethod) UnmarshalText(b []byte) (err error) {
	*h, err = ParseHashMethod(string(b))
	return
}

// snake turns an enumeration name into a column-name fragment: "egress-limit" -> "egress_limit".
func snake(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '-' {
			b[i] = '_'
		}
	}
	return string(b)
}
