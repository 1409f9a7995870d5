// Package ecmp models a switch's equal-cost multi-path member selection: the
// 13-byte flow hash key, the six hash methods of SPEC 3.6, per-switch salts, and the
// load balancer of SPEC 3.7 (none or flowlet) with its load balancing record.
package ecmp
