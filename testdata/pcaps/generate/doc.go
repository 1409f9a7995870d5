// Command generate writes the synthetic traces committed under testdata/pcaps
// (demo.pcap, incast.pcap, many-flows.pcap, tcp-incast.pcap, ipv6.pcap, mixed.pcap)
// and under testdata/validation (hpcc-s1.pcap, hpcc-s1-lone.pcap: docs/validation.md)
// from their seeded scenarios in package internal/tracegen, or, with -bench N, one
// N-packet benchmark trace.
//
// Usage, from the repository root:
//
//	go run ./testdata/pcaps/generate                 # rewrite the committed traces
//	go run ./testdata/pcaps/generate -bench 1000000 -o /tmp/bench-1m.pcap
//	go run ./testdata/pcaps/generate -bench 4000000 -o - | replay inspect /dev/stdin
//
// The output is deterministic: the same scenario and seed give the same bytes, and
// internal/tracegen's tests fail when a committed file differs from its scenario.
package main
