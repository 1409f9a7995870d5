// Package ipaddr holds the IP addresses of both families as one small value: the
// representation that ingest's packets and five-tuples, the replay's arrivals and
// flow table and the records' rows share (docs/model.md#ipv6).
//
// An Addr is the address in its 16-byte IPv6 form (an IPv4 address a.b.c.d as the
// IPv4-mapped ::ffff:a.b.c.d, RFC 4291 2.5.5.2), as two words, and its family: 24
// bytes without pointers. It is comparable (a map key, a field of a comparable five-tuple), costs no
// allocation to build or copy, and keeps the family apart from the bytes: an IPv6
// packet whose address happens to be ::ffff:10.0.0.1 is not the IPv4 endpoint
// 10.0.0.1. netip.Addr would do the same but holds a pointer (its zone), which the
// per-packet paths (decoding, the reorder buffer, the replay's feed) would then copy
// through the garbage collector's write barriers.
package ipaddr
