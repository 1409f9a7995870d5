package records

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Every reason of the trace's skipped map shows, including reasons this package does
// not know (a reader that learns to skip multicast needs no change here), then
// intra-host and oversize packets; zero counts do not.
func TestTraceNotInjected(t *testing.T) {
	trace := json.RawMessage(`{"packets": 540, "ipv4_packets": 520,
		"skipped": {"arp": 12, "ipv6": 0, "multicast": 5, "out-of-order": 3},
		"intra_host": 7, "oversize": {"packets": 4, "split_into": 9, "dropped": 1}}`)
	got, err := TraceNotInjected(trace)
	if err != nil {
		t.Fatal(err)
	}
	want := []NotInjected{
		{Kind: NotInjectedSkipped, Reason: "arp", Packets: 12},
		{Kind: NotInjectedSkipped, Reason: "multicast", Packets: 5},
		{Kind: NotInjectedSkipped, Reason: "out-of-order", Packets: 3},
		{Kind: NotInjectedIntraHost, Reason: "intra-host", Packets: 7},
		{Kind: NotInjectedSplit, Reason: "oversize-split", Packets: 3, Into: 9},
		{Kind: NotInjectedOversizeDrop, Reason: "oversize-dropped", Packets: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	var words []string
	for _, n := range got {
		words = append(words, n.String())
	}
	wantWords := []string{"12 arp (skipped)", "5 multicast (skipped)", "3 out-of-order (skipped)", "7 intra-host", "3 oversize split into 9 packets", "1 oversize dropped"}
	if !reflect.DeepEqual(words, wantWords) {
		t.Errorf("words %q, want %q", words, wantWords)
	}
	if none, err := TraceNotInjected(json.RawMessage(`{"skipped": {"arp": 0}, "intra_host": 0, "oversize": {"packets": 0}}`)); err != nil || len(none) != 0 {
		t.Errorf("nothing skipped: %v, %v", none, err)
	}
}
