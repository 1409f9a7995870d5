package filter

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/ingest"
)

// tsharkCounts holds, per capture of ../shared/pcaps and filter expression, the
// number of frames tshark's equivalent display filter selects, written by the script
// beside it (the display filters and the reasons for their form are there):
//
//	sh ingest/filter/testdata/tshark-filter.sh ../shared/pcaps > ingest/filter/testdata/tshark-filter.tsv
const tsharkCounts = "testdata/tshark-filter.tsv"

// pcapsDir is ../shared/pcaps from the repository root.
var pcapsDir = filepath.Join("..", "..", "..", "shared", "pcaps")

// TestFilterCountsMatchTshark: on four real captures (IPv4 and IPv6, VLAN, fragments,
// ICMP errors, ARP), every expression keeps exactly the packets tshark's display
// filter selects, and the packets it does not keep are counted filtered.
func TestFilterCountsMatchTshark(t *testing.T) {
	if _, err := os.Stat(pcapsDir); err != nil {
		t.Skipf("the real captures are not here (%v): they live in ../shared/pcaps beside the repository", err)
	}
	data, err := os.ReadFile(tsharkCounts)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	rows := 0
	files := map[string]bool{}
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(text, "#") || strings.HasPrefix(text, "file\t") || text == "" {
			continue
		}
		c := strings.Split(text, "\t")
		if len(c) != 4 {
			t.Fatalf("%s:%d: %d columns, want 4", tsharkCounts, line, len(c))
		}
		want, err := strconv.ParseInt(c[3], 10, 64)
		if err != nil {
			t.Fatalf("%s:%d: %v", tsharkCounts, line, err)
		}
		rows++
		files[c[0]] = true
		t.Run(c[0]+"/"+c[1], func(t *testing.T) {
			f, err := Parse(c[1])
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(pcapsDir, c[0])
			all, err := ingest.Summarize([]string{path}, ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s, err := ingest.Summarize([]string{path}, ingest.Options{Filter: f})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.IPPackets(); got != want {
				t.Errorf("%d packets kept, tshark's %q selects %d", got, c[2], want)
			}
			if kept, filtered := s.IPPackets(), s.Skipped[ingest.SkipFiltered.String()]; kept+filtered != all.IPPackets() || s.Packets != all.Packets {
				t.Errorf("kept %d + filtered %d != %d IP packets (records %d of %d)", kept, filtered, all.IPPackets(), s.Packets, all.Packets)
			}
		})
	}
	if rows < 30 || len(files) < 3 {
		t.Fatalf("%s: %d rows over %d captures, want at least 30 over 3", tsharkCounts, rows, len(files))
	}
}
