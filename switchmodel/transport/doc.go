// Package transport is closed-loop replay's host side (docs/model.md#closed-loop-transports):
// simulated senders and receivers that re-send captured flows through the switch
// model under congestion control, instead of injecting every captured packet at its
// captured time.
//
// A Layer is the switchmodel.Agent of a Network. The replay registers each
// closed-loop flow (NewFlow) and offers its captured packets, in capture order, as
// segments at their captured (injection) times (Offer); the flow's sender puts them
// into its source host's NIC when its congestion control allows, never before they
// are available. The receiver at the destination host acknowledges them; its
// acknowledgements, CNPs and NAKs are packets of their own (switchmodel.Ack, Cnp,
// Nak) that cross the fabric, take buffer and wire time and can be dropped.
//
//   - TCP (NewReno and DCTCP): a window in bytes, RFC 6928's initial window of the
//     flow's SMSS (FlowSpec.SMSS: the stack's, from the capture's SYNs or the MTU),
//     slow start and congestion avoidance only while cwnd-limited (RFC 7661, Linux's
//     test), a restart after an idle period longer than the RTO (IdleRestart, RFC
//     5681 4.1), limited transmit (RFC 3042), fast retransmit on the third duplicate
//     ACK and NewReno fast recovery (RFC 5681, 6582), a retransmission timeout per RFC 6298
//     with exponential backoff (after a timeout the sender goes back to the first
//     unacknowledged segment). The receiver acknowledges every segment at once with
//     the next segment it expects (cumulative; no delayed ACK, no SACK), echoing the
//     segment's CE mark (ECE). DCTCP (RFC 8257) keeps alpha per window of data and
//     cuts the window by alpha/2 on the first ECE of a window; a window is cut at most
//     once, by ECE or loss.
//   - RoCEv2 (DCQCN, NVIDIA ConnectX behaviour as HPCC's ns-3 "Mlx" mode, or the
//     DCQCN paper's with DcqcnVariant paper): the receiver sends a CNP for a
//     CE-marked packet unless it sent one for the flow in the last CnpInterval, an
//     ACK per packet, and a NAK per gap, re-sent every NakInterval while it still
//     waits for the same packet; the sender paces its packets at its current rate RC
//     (at most one of its packets waits in the NIC at a time), cuts RC on CNPs and
//     raises it by fast recovery, additive and hyper increase, and goes back N on a
//     NAK or after RoceTimeout without progress.
//
// Control packets leave the receiver's NIC ahead of its host's data
// (switchmodel.Network.InjectControl) for the kinds NicControlPriority names: RoCE's
// by default.
//
// Sequence space: a TCP segment occupies its payload bytes (at least 1, so that a
// SYN or FIN is a unit of its own); a RoCE segment is one packet. Segments are never
// re-cut: a retransmission is the same captured packet sent again (a new packet,
// counted in Retransmits). Packet.Seq carries a segment's index in its flow; an ACK's
// or NAK's Seq is the index of the next segment the receiver expects.
//
// Timers are engine events of the Layer's one handler: TCP keeps one pending
// retransmission-timer event per flow (moved lazily), a RoCE sender one timeout event
// and one pacing event, a RoCE receiver one NAK re-send event while it waits. DCQCN's three periodic timers (alpha update, rate decrease,
// rate increase) are evaluated lazily, in closed form, when the sender next needs its
// rate or a CNP arrives: they cost nothing while a flow is idle, and nothing for flows
// that saw no CNP.
//
// Time is picoseconds (units.Time), sizes bytes, rates bits per second.
package transport
