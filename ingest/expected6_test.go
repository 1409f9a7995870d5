package ingest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tsharkIPv6 is what tshark counts of the IPv6 packets of the real captures, written
// by the script beside it (the exact tshark command and counting rules are there):
//
//	sh ingest/testdata/tshark-ipv6.sh ../shared/pcaps > ingest/testdata/tshark-ipv6.tsv
//
// (run from the repository root; tshark 4.0.17, Debian 12). TestTsharkIPv6Recording
// runs the script again where tshark is installed and checks the file is its output.
const tsharkIPv6 = "testdata/tshark-ipv6.tsv"

type ipv6Row struct {
	file           string
	packets, flows int64
	dscp, ecn      string
}

func readTsharkIPv6(t *testing.T) []ipv6Row {
	t.Helper()
	data, err := os.ReadFile(tsharkIPv6)
	if err != nil {
		t.Fatal(err)
	}
	var rows []ipv6Row
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(text, "#") || strings.HasPrefix(text, "file\t") || text == "" {
			continue
		}
		c := strings.Split(text, "\t")
		if len(c) != 5 {
			t.Fatalf("%s:%d: %d columns, want 5", tsharkIPv6, line, len(c))
		}
		var n [2]int64
		for i := range n {
			if n[i], err = strconv.ParseInt(c[1+i], 10, 64); err != nil {
				t.Fatalf("%s:%d: %v", tsharkIPv6, line, err)
			}
		}
		rows = append(rows, ipv6Row{file: c[0], packets: n[0], flows: n[1], dscp: c[3], ecn: c[4]})
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no rows", tsharkIPv6)
	}
	return rows
}

// TestExpectedCapturesIPv6 checks by_family.ipv6 of every real capture against
// tshark (testdata/tshark-ipv6.tsv): IPv6 packets, distinct 5-tuples and the DSCP
// and ECN histograms of the outer IPv6 header's Traffic Class. Reordering is off, as
// tshark reads in file order.
func TestExpectedCapturesIPv6(t *testing.T) {
	rows := readTsharkIPv6(t)
	expected := readExpected(t) // skips without ../shared/pcaps
	if len(rows) != len(expected) {
		t.Fatalf("%s has %d files, expected.tsv %d", tsharkIPv6, len(rows), len(expected))
	}
	var sum int64
	for _, row := range rows {
		t.Run(row.file, func(t *testing.T) {
			s, err := Summarize([]string{filepath.Join(sharedPcaps, row.file)}, Options{ReorderWindow: -1})
			if err != nil {
				t.Fatal(err)
			}
			v6 := &s.ByFamily.IPv6
			if s.IPv6Packets != row.packets || v6.Packets != row.packets {
				t.Errorf("ipv6 packets = %d (by_family %d), want %d", s.IPv6Packets, v6.Packets, row.packets)
			}
			if v6.Flows != row.flows {
				t.Errorf("ipv6 flows = %d, want %d", v6.Flows, row.flows)
			}
			if got := histogram(v6.DSCP, 64); got != row.dscp {
				t.Errorf("ipv6 dscp = %s, want %s", got, row.dscp)
			}
			if got := histogram(v6.ECN, 4); got != row.ecn {
				t.Errorf("ipv6 ecn = %s, want %s", got, row.ecn)
			}
			if s.Flows != s.ByFamily.IPv4.Flows+v6.Flows {
				t.Errorf("flows %d != ipv4 %d + ipv6 %d", s.Flows, s.ByFamily.IPv4.Flows, v6.Flows)
			}
			for d, n := range s.DSCP {
				if n != s.ByFamily.IPv4.DSCP[d]+v6.DSCP[d] {
					t.Errorf("dscp %s: %d != ipv4 %d + ipv6 %d", d, n, s.ByFamily.IPv4.DSCP[d], v6.DSCP[d])
				}
			}
		})
		sum += row.packets
	}
	// The example: 4,440 of tls-browsing's 7,451 packets are IPv6.
	if sum < 4440 {
		t.Errorf("%d IPv6 packets in all, fewer than tls-browsing's 4,440 alone", sum)
	}
}

// TestTsharkIPv6Recording runs tshark-ipv6.sh again (where tshark and the captures
// are present) and checks that testdata/tshark-ipv6.tsv is its output, so the
// expectations above are tshark's and not edited by hand.
func TestTsharkIPv6Recording(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: runs tshark over every real capture (about 20 s)")
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("skipping: tshark is not installed (apt-get install tshark)")
	}
	if _, err := os.Stat(filepath.Join(sharedPcaps, "expected.tsv")); err != nil {
		t.Skipf("skipping: %s is absent", sharedPcaps)
	}
	out, err := exec.Command("sh", "testdata/tshark-ipv6.sh", sharedPcaps).Output()
	if err != nil {
		t.Fatalf("tshark-ipv6.sh: %v", err)
	}
	want, err := os.ReadFile(tsharkIPv6)
	if err != nil {
		t.Fatal(err)
	}
	// The first line names the tshark version, which may differ.
	strip := func(b []byte) string { _, rest, _ := strings.Cut(string(b), "\n"); return rest }
	if strip(out) != strip(want) {
		t.Errorf("tshark-ipv6.sh gives\n%s\nbut %s holds\n%s", out, tsharkIPv6, want)
	}
}
