// Package ecmp models how a switch spreads flows over an equal-cost set: the flow
// hash key, the six hash methods and per-switch salt of docs/model.md#ecmp-hashing, and the load
// balancer of docs/model.md#load-balancing (none or flowlet) with its load balancing record. It is pure
// and per switch: it does not import package switchmodel; the switch calls it from
// its forwarding code and implements MemberView over the set's ports.
//
// Units: time is units.Time (int64 picoseconds), sizes are bytes, hashes uint32.
//
// # Hash key
//
// Key is 13 bytes for IPv4, big-endian: src IPv4 (4), dst IPv4 (4), protocol (1),
// src port (2), dst port (2); 37 bytes for IPv6: src (16), dst (16), upper-layer
// protocol (1), src port (2), dst port (2) (docs/model.md#ipv6). MakeKey and MakeKey6
// set the ports to 0 for protocols other than TCP (6) and UDP (17) and for non-first
// fragments.
//
// # Hash methods
//
// Method.Hash(salt, key) computes, exactly:
//
//	crc32          CRC-32/IEEE of the key (check "123456789" = 0xCBF43926)
//	crc32WithSalt  fmix32 of the CRC-32/IEEE of the 4-byte big-endian salt followed by the key (default; see Polarization)
//	crc16          CRC-16/ARC: poly 0x8005 reflected, init 0, xorout 0 (check 0xBB3D)
//	crc16Ccitt     CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, not reflected (check 0x29B1)
//	xor16          XOR of the big-endian 16-bit words of the key padded with a zero byte
//	               (7 words of 14 bytes; 19 words of 38 bytes for IPv6)
//	toeplitz       Microsoft RSS Toeplitz hash, standard 40-byte key, input src IP, dst IP,
//	               src port, dst port (12 bytes, 36 for IPv6; the address bytes alone when
//	               the key's ports are 0, which gives the same value since zero bytes add
//	               nothing)
//
// All six are affine over GF(2) in the key bytes, so each is computed as 13 (37)
// independent lookups in a per-position table per key length built once at start (from
// hash/crc32's CRC-32 for the two CRC-32 methods; from table-driven CRC-16s written
// here, as the standard library has none). Tests check the published check values,
// Microsoft's IPv4 and IPv6 verification tables, IPv6 check values computed by an
// independent script (testdata/hash6.py) and bit-by-bit reference implementations. Member
// choice without load balancing is hash mod n over the set in port order (Member,
// PathMembers; PathMembers runs a whole path without a switch).
//
// DefaultSalt(name, seed) = crc32IEEE(name) XOR uint32(seed) is a switch's default
// HashSalt; only crc32WithSalt uses the salt.
//
// Polarization. The unsalted methods polarize adjacent tiers: the same function of
// the same key with the same modulus at a rack and a fabric switch sends all of a
// fabric switch's up traffic to one spine. The seed says crc32WithSalt "salts the hash
// per switch, which de-correlates the choices of adjacent tiers", and the seed's words
// win over the formula of docs/model.md#ecmp-hashing, which alone cannot do that: a CRC is affine, so
// crc32(salt||key) is the unsalted CRC XOR a constant that depends on the salt; two
// switches' values of any key differ by a fixed constant, and hash mod 4 keeps two
// bits that this constant only permutes (each (rack, fabric) pair would still use one
// spine; with the docs/model.md#clos-builder names 8 of pod 0's 16 spine uplinks would stay idle, for
// every Seed). Decision: crc32WithSalt is MurmurHash3's fmix32 finalizer (a
// non-linear bijection) applied to the salted CRC-32 of docs/model.md#ecmp-hashing:
//
//	crc32WithSalt(k) = fmix32(CRC-32/IEEE(salt as 4 big-endian bytes || k))
//
// The unsalted methods stay exactly as docs/model.md#ecmp-hashing defines them, so comparisons still
// show their polarization; TestPolarizationSalted pins both facts.
//
// # Load balancing
//
// Config.LoadBalancing None (default): member = hash mod n; the view is not used.
//
// Flowlet (docs/model.md#load-balancing). The balancer keeps a flow table per equal-cost set: exact (one
// entry per flow, FlowTableSize 0) or hashed (FlowTableSize entries indexed by
// hash mod FlowTableSize, where hash is the switch's configured hash of the key; the
// flows whose hashes collide share an entry and its member, as in hardware). An
// entry holds the member of its current flowlet and the time of its last packet. A
// packet starts a new flowlet when its entry is unused (a new flow) or has been
// idle for Gap or longer (now - last >= Gap: exactly Gap counts as idle; Gap-1ps
// does not). A new flowlet takes the member with the least EgressBytes; with
// PreferUnpaused (default) members that are Paused for the packet's class are
// avoided while any member is unpaused, and a paused member is chosen only when all
// are paused (then the least occupied of them). Ties keep the entry's current member
// if it is among the tied, else take the first tied member in the order hash mod n,
// hash mod n + 1, ... (wrapping). Otherwise the packet follows the entry's member.
// Every packet updates the entry's last time. A nil MemberView means all members
// empty and unpaused.
//
// # Load balancing record
//
// Records() returns one Record per (set, member), in (set, member) order:
//
//	Flows     distinct flows (5-tuple keys within the set) that sent at least one packet
//	          through the member; a flow that moved over three members counts once on each
//	Flowlets  new flowlets placed on the member (Flowlet only; 0 under None)
//	Packets   packets Select assigned to the member
//	Bytes     sum of the bytes argument of those packets
//	MovedIn   times a flow's packet went to this member while the flow's previous packet
//	          in the set went to another; MovedOut counts the same event on the other
//	          member, so sum(MovedIn) == sum(MovedOut) per set. With an exact table a flow
//	          moves only when it starts a new flowlet on a different member; with a hashed
//	          table it also moves when a colliding flow started a flowlet on the shared
//	          entry. Always 0 under None.
//
// # Determinism and cost
//
// Choices depend only on the configuration, the call sequence and the view; there is
// no randomness and no map iteration. Select does not allocate for a flow already
// seen (a new flow may grow the flow tables). It keeps per flow slot 72 bytes (a
// 32-byte state and the 40-byte key of either family; the table is at most half
// full) plus a bitset of the members the flow used, so memory grows with the number
// of distinct flows (the exact accounting of Flows needs it even with a hashed flow
// table).
// A Balancer is owned by one simulation goroutine; it is not safe for concurrent use.
package ecmp
