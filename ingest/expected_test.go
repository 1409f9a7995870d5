package ingest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sharedPcaps is ../shared/pcaps relative to the repository root.
const sharedPcaps = "../../shared/pcaps"

// histogram formats a Summary map as tshark's "value:count" list, ascending.
func histogram(m map[string]int64, max int) string {
	var parts []string
	for v := 0; v < max; v++ {
		if n := m[strconv.Itoa(v)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d:%d", v, n))
		}
	}
	return strings.Join(parts, ",")
}

type expectedRow struct {
	file                 string
	ipv4, flows, nonIPv4 int64
	dscp, ecn            string
}

func readExpected(t *testing.T) []expectedRow {
	t.Helper()
	f, err := os.Open(filepath.Join(sharedPcaps, "expected.tsv"))
	if os.IsNotExist(err) {
		t.Skipf("skipping: %s is absent (the real captures live beside the repository in ../shared/pcaps)", sharedPcaps)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []expectedRow
	sc := bufio.NewScanner(f)
	for line := 0; sc.Scan(); line++ {
		c := strings.Split(sc.Text(), "\t")
		if line == 0 || len(c) == 1 && c[0] == "" {
			continue
		}
		if len(c) != 6 {
			t.Fatalf("expected.tsv line %d: %d columns, want 6", line+1, len(c))
		}
		atoi := func(s string) int64 {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatalf("expected.tsv line %d: %v", line+1, err)
			}
			return n
		}
		rows = append(rows, expectedRow{file: c[0], ipv4: atoi(c[1]), flows: atoi(c[2]), dscp: c[3], ecn: c[4], nonIPv4: atoi(c[5])})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("expected.tsv has no rows")
	}
	return rows
}

// TestExpectedCaptures checks every real capture against the values tshark
// counted (../shared/pcaps/expected.tsv, PROVENANCE.md there). tshark reads in file
// order, so the decoder is checked with reordering off; a second pass with the
// default 10 ms window checks that reordering loses nothing but the packets it
// reports as out-of-order.
func TestExpectedCaptures(t *testing.T) {
	for _, row := range readExpected(t) {
		t.Run(row.file, func(t *testing.T) {
			path := filepath.Join(sharedPcaps, row.file)
			var warns []string
			s, err := Summarize([]string{path}, Options{ReorderWindow: -1, Warn: func(m string) { warns = append(warns, m) }})
			if err != nil {
				t.Fatal(err)
			}
			v4 := &s.ByFamily.IPv4
			if s.IPv4Packets != row.ipv4 || v4.Packets != row.ipv4 {
				t.Errorf("ipv4 packets = %d (by_family %d), want %d", s.IPv4Packets, v4.Packets, row.ipv4)
			}
			if v4.Flows != row.flows {
				t.Errorf("ipv4 flows = %d, want %d", v4.Flows, row.flows)
			}
			if got := histogram(v4.DSCP, 64); got != row.dscp {
				t.Errorf("ipv4 dscp = %s, want %s", got, row.dscp)
			}
			if got := histogram(v4.ECN, 4); got != row.ecn {
				t.Errorf("ipv4 ecn = %s, want %s", got, row.ecn)
			}
			// Every non-IPv4 frame is IPv6 or not IP (expected6_test.go checks the
			// IPv6 side against tshark).
			if s.IPv6Packets+s.NonIPPackets != row.nonIPv4 {
				t.Errorf("ipv6 %d + non-ip %d packets = %d, want %d non-ipv4 (skipped %v)",
					s.IPv6Packets, s.NonIPPackets, s.IPv6Packets+s.NonIPPackets, row.nonIPv4, s.Skipped)
			}
			if s.Packets != s.IPv4Packets+s.IPv6Packets+s.NonIPPackets {
				t.Errorf("packets %d != ipv4 %d + ipv6 %d + non-ip %d", s.Packets, s.IPv4Packets, s.IPv6Packets, s.NonIPPackets)
			}
			if len(warns) > 0 {
				t.Errorf("unexpected warnings: %q", warns)
			}

			// Default window: only out-of-order packets may go missing, and only
			// the edited edge-case file has any.
			d, err := Summarize([]string{path}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			late := d.Skipped[SkipOutOfOrder.String()]
			if d.IPv4Packets+d.IPv6Packets+late != s.IPv4Packets+s.IPv6Packets || d.NonIPPackets != s.NonIPPackets {
				t.Errorf("default window: ip %d + out-of-order %d, non-ip %d; want %d and %d",
					d.IPPackets(), late, d.NonIPPackets, s.IPPackets(), s.NonIPPackets)
			}
			if late > 0 && !strings.HasPrefix(row.file, "edge-") {
				t.Errorf("default window: %d packets out of order", late)
			}
		})
	}
}
