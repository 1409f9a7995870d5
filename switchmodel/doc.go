// Package switchmodel is tracefabric's discrete-event model of a shared-buffer data
// center switch ("Scala Switch" 3.7.0; docs/model.md#switch-model) and of the host NICs and links
// around it. It imports neither Arrow nor plotting: results leave through observer
// interfaces and counters that package replay turns into records.
//
// # Units
//
// Time is units.Time, int64 picoseconds since the start of the run; sizes are bytes;
// speeds bits per second. Serialization of n wire bytes at speed C is
// ceil(n*8e12/C) ps (units.SerializationTime). A packet of length L (the IPv4 total
// length, or 40 + the IPv6 payload length) is a frame of F = max(64, L+18) bytes and F+20 bytes on the wire; buffers account
// ceil(F/CellSize) cells, and every buffer byte count (queues, pools, headroom,
// thresholds compared with them, watermarks, samples) is cells*CellSize.
//
// # What it models
//
//   - Engine: events ordered by (time, order key) in a calendar queue (a
//     ring of time buckets sized to the pending events, O(1) per event, each bucket's
//     earliest event stored inline so that most events never leave the ring's array)
//     backed by a typed 4-ary min-heap for the far future,
//     one pending event per busy port with another frame ready (transmit done; a
//     port whose queue emptied only reserves the event's place in the order and
//     schedules it there if a frame arrives in time), per link with frames in flight
//     (its head frame's arrival, in the place of the order its sender reserved when
//     the frame started: the link keeps a FIFO of frames), per switch port's
//     ForwardingLatency line, per paused (port, pool) refresh timer and per paused
//     (port, class) pause timer. External code registers an EventHandler and
//     schedules its own events (Engine.Register, Engine.Schedule).
//   - RunPartitioned: the same run as the fabric's partitions, each with its own
//     Engine, arena and counters on its own goroutine, in windows of the lookahead,
//     frames crossing cut links at barriers with their senders' keys, observations
//     handed over in key order: identical records for any partitioning
//     (docs/parallel.md; open loop without failures so far; buffer samples at barriers).
//   - Packets live in an arena of fixed chunks recycled through a free list: no
//     allocation per packet in steady state. A *Packet is valid until it is delivered
//     or dropped.
//   - Port: 8 class queues plus a PFC queue; strict priority PFC, TC7..TC0, skipping
//     classes the peer paused; a frame on the wire is never pre-empted. Link: speed
//     and propagation delay per direction, store and forward.
//   - Classification (docs/model.md#classification): every node gives a data packet
//     its traffic class when it enters the node, from the packet's DSCP through the
//     node's own config.ClassMap (a 64-entry table: one load per hop): a switch's from
//     its config.Switch (DscpToTc over DSCP/8), a host NIC's from
//     Options.HostClasses (nil: DSCP/8), at injection and on delivery.
//   - Switch: routing by destination host to an
//     equal-cost set; a Selector (package ecmp's Balancer) picks the member of sets
//     of two or more ports; ForwardingLatency before admission; the shared buffer
//     manager of docs/model.md#shared-buffer (pools, per-(port, lossless pool) headroom outside the
//     pools sized by config.Switch.Layout, dynamic or fixed Xoff, XonThreshold,
//     dynamic or fixed lossy egress limits, drops headroom / egress-limit /
//     pool-full, release when a packet starts transmitting); PFC (docs/model.md#priority-flow-control); ECN
//     (docs/model.md#ecn-marking).
//   - Host: a NIC with unbounded per-class FIFOs, strict priority, honouring PFC;
//     hosts never send PFC. A packet is delivered when its last bit reaches the host
//     whose Index equals Packet.Dst.
//
// # Seeds
//
// Each switch draws ECN marks from its own PCG generator seeded with
// config.ComponentSeed(Options.Seed, name+"/ecn"), i.e. PCG(uint64(Seed),
// crc32IEEE(name+"/ecn")). A draw happens only for an ECT(0)/ECT(1) packet of an
// ECN-enabled class whose marking probability is strictly between 0 and 1, so the
// stream depends only on the traffic. Hash salts are the Selector's business
// (ecmp.DefaultSalt).
//
// # Decisions where the spec is silent
//
//   - Release (docs/model.md#shared-buffer "headroom first then shared"): a departing packet's bytes
//     leave its (ingress port, pool) headroom counter first, whatever part it was
//     charged to, then shared (as HPCC's switch does).
//   - Thresholds are evaluated in float64 on byte counts: XoffThreshold =
//     XoffAlpha*(PoolSize-PoolShared), XonThreshold = max(Xon, XoffThreshold -
//     XonOffset) at the moment of the departure, limit = EgressAlpha*(PoolSize -
//     PoolUsed). A lossless packet goes to shared only if the pool also has room.
//   - A drop is counted at the ingress port for headroom and no-route, at the egress
//     port for egress-limit and pool-full. no-route is the model's own reason for a
//     packet with no route (never expected in replay's Clos).
//   - PFC: the pause quanta time is SerializationTime(quanta*64 bytes, port speed);
//     the refresh period is floor(pause time / 2). tx_pause / tx_resume events and
//     counters happen when the PFC frame starts transmitting, rx_* when its last bit
//     arrives, expire when a received pause times out. A resume is sent only when the
//     (port, pool) is pausing. A pausing (port, pool) that holds nothing when its
//     refresh is due (every packet that arrived there was dropped, e.g. with a
//     zero headroom) resumes then instead of refreshing, since no departure could
//     ever resume it. PausedPs is counted at the paused sender's port.
//     PFC frames skip ForwardingLatency, are not packet-hops and are not in Tx
//     counters; they are in Counters.PFCFrames and the PFC counters per class.
//   - ECN: the per-queue average is updated at every departure of the queue, marked
//     or not; marks are counted at the egress port (ECNMarked).
//   - Statistics bytes are frame bytes (F). Rx counts frames whose last bit arrived at
//     the port (before admission), Tx frames started on it.
//   - Buffer samples are taken at multiples of BufferStatsReportInterval while any
//     packet or PFC frame is in the network; the sampler stops when it is empty (so
//     draining ends) and restarts at the next multiple when a packet is injected.
//   - The Selector is told the frame bytes of the packet; the member index it returns
//     is recorded in Packet.RackMember or FabricMember by the switch's Tier.
//
// # Driving a run
//
// Build with NewNetwork, AddSwitch, AddHost, Connect, AddEqualCostSet and SetRoute;
// Start lays out the buffers and returns warnings; feed packets with NewPacket and
// Inject (from an event handler) or InjectAt; run with Engine.Run or RunUntil, and
// after the last injection Network.Drain(limit), which stops at the last delivery or
// drop rather than at a stale timer; read Counters, Node.PortStats, Node.Buffered and
// InFlight, ForEachOutstanding (undrained packets), Switch.Selector records and
// CheckAccounting at the end.
//
// The calendar's geometry (bucket count and width) adapts to the pending events as
// the run goes; it changes only the cost, never the order: (time, order key), the
// key of docs/model.md#event-order-and-determinism (global events, then injections
// by index, then node events by scheduling node and that node's own counter).
// Handlers register as global (Engine.Register), per node (RegisterNode) or shared
// (RegisterShared, naming their node per event with ActAs).
package switchmodel
