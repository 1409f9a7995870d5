package tracegen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/tracegen"
)

// TestIngestAgrees reads each committed trace with package ingest and checks its
// summary against what the generator says it wrote: packets of each family, bytes
// (packet sizes, not captured bytes), flows, first and last timestamps, and class mix.
func TestIngestAgrees(t *testing.T) {
	for _, s := range tracegen.Committed() {
		t.Run(s.Name, func(t *testing.T) {
			var buf bytes.Buffer
			st, err := s.WritePcap(&buf)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), s.Name)
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			sum, err := ingest.Summarize([]string{path}, ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Packets != st.Packets || sum.IPv6Packets != st.IPv6 || sum.IPv4Packets != st.Packets-st.IPv6 || sum.NonIPPackets != 0 ||
				sum.Bytes != st.Bytes || sum.Flows != int64(st.Flows) ||
				sum.First != st.First.UnixNano() || sum.Last != st.Last.UnixNano() ||
				sum.FirstTS != st.First.UTC().Format("2006-01-02T15:04:05.000000000Z07:00") {
				t.Errorf("ingest summary %+v disagrees with generator stats %+v", *sum, st)
			}
			if sum.Skipped["out-of-order"] != 0 {
				t.Errorf("%d packets out of order", sum.Skipped["out-of-order"])
			}
			switch want := map[string]int64{"incast.pcap": 42, "midconn.pcap": 16, "reqresp.pcap": 18}[s.Name]; {
			case want == 0 && sum.Endpoints != 128:
				t.Errorf("%d endpoints, want all 128 hosts", sum.Endpoints)
			case want != 0 && sum.Endpoints != want:
				t.Errorf("%d endpoints, want %d", sum.Endpoints, want)
			}
			var tcp, roce int64
			for d, n := range sum.DSCP {
				switch d {
				case "0":
					tcp += n
				case "26":
					roce += n
				}
			}
			if tcp == 0 || (s.Name != "many-flows.pcap" && s.Name != "tcp-incast.pcap" && s.Name != "reqresp.pcap" && roce == 0) {
				t.Errorf("DSCP histogram %v lacks the scenario's classes", sum.DSCP)
			}
		})
	}
}
