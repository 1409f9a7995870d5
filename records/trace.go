package records

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Why trace packets were not injected as captured (NotInjected.Kind).
const (
	// NotInjectedSkipped: the record was not replayed at all; Reason is its key in the
	// trace's skipped map ("arp", "ipv6", "out-of-order", ...).
	NotInjectedSkipped = "skipped"
	// NotInjectedIntraHost: both ends map to one host, so the packet never reaches the
	// fabric (trace.intra_host).
	NotInjectedIntraHost = "intra-host"
	// NotInjectedSplit: longer than the MTU and split into Into MTU-sized packets
	// (--oversize split).
	NotInjectedSplit = "oversize-split"
	// NotInjectedOversizeDrop: longer than the MTU and dropped at its source host
	// (--oversize drop; counted as injected and dropped, reason oversize).
	NotInjectedOversizeDrop = "oversize-dropped"
)

// NotInjected counts trace packets that did not enter the fabric as captured, for
// one reason.
type NotInjected struct {
	Kind    string `json:"kind"`           // NotInjectedSkipped, NotInjectedIntraHost, ...
	Reason  string `json:"reason"`         // the skipped map's key (Kind skipped), else Kind
	Packets int64  `json:"packets"`        // trace packets
	Into    int64  `json:"into,omitempty"` // Kind oversize-split: the packets they became
}

// String says it in a few words: "8 arp (skipped)", "4 intra-host",
// "3 oversize split into 9 packets", "1 oversize dropped".
func (n NotInjected) String() string {
	switch n.Kind {
	case NotInjectedSkipped:
		return fmt.Sprintf("%d %s (skipped)", n.Packets, n.Reason)
	case NotInjectedSplit:
		return fmt.Sprintf("%d oversize split into %d packets", n.Packets, n.Into)
	case NotInjectedOversizeDrop:
		return fmt.Sprintf("%d oversize dropped", n.Packets)
	}
	return fmt.Sprintf("%d %s", n.Packets, n.Reason)
}

// TraceNotInjected lists, from run.json's trace section, every reason for which
// trace packets were not injected as captured, with a non-zero count: each key of
// the skipped map (whatever reasons the reader counts: non-IPv4 kinds, out-of-order,
// ...; sorted by name), then intra-host packets and oversize packets split or
// dropped. An empty list means every packet of the trace was injected as captured.
func TraceNotInjected(trace json.RawMessage) ([]NotInjected, error) {
	if len(trace) == 0 {
		return nil, nil
	}
	var t struct {
		Skipped   map[string]int64 `json:"skipped"`
		IntraHost int64            `json:"intra_host"`
		Oversize  struct {
			Packets   int64 `json:"packets"`
			SplitInto int64 `json:"split_into"`
			Dropped   int64 `json:"dropped"`
		} `json:"oversize"`
	}
	if err := json.Unmarshal(trace, &t); err != nil {
		return nil, fmt.Errorf("records: run.json trace: %w", err)
	}
	var out []NotInjected
	reasons := make([]string, 0, len(t.Skipped))
	for r, n := range t.Skipped {
		if n > 0 {
			reasons = append(reasons, r)
		}
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		out = append(out, NotInjected{Kind: NotInjectedSkipped, Reason: r, Packets: t.Skipped[r]})
	}
	if t.IntraHost > 0 {
		out = append(out, NotInjected{Kind: NotInjectedIntraHost, Reason: NotInjectedIntraHost, Packets: t.IntraHost})
	}
	if split := t.Oversize.Packets - t.Oversize.Dropped; split > 0 {
		out = append(out, NotInjected{Kind: NotInjectedSplit, Reason: NotInjectedSplit, Packets: split, Into: t.Oversize.SplitInto})
	}
	if t.Oversize.Dropped > 0 {
		out = append(out, NotInjected{Kind: NotInjectedOversizeDrop, Reason: NotInjectedOversizeDrop, Packets: t.Oversize.Dropped})
	}
	return out, nil
}
