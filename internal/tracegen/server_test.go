package tracegen

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/gopacket/layers"
)

// The stand-ins for real captures are committed as generated, byte for byte.
func TestCapturesUpToDate(t *testing.T) {
	for _, s := range Captures() {
		var buf bytes.Buffer
		if _, err := s.WritePcap(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "..", "testdata", "pcaps", s.Name)
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (regenerate with: go run ./testdata/pcaps/generate)", err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s differs from its scenario: run go run ./testdata/pcaps/generate and commit the result", path)
		}
	}
}

// server.pcap is what ServerCapture's doc says: one vantage point (every unicast
// packet to or from the server), one /24, the backups caught mid-connection (data
// first, no SYN or FIN), ACKs to a client whose data is not in the capture, reads
// that open and close, the classes, three multicast announcements, and traffic only
// around 0 and 20 s besides the DNS exchanges.
func TestServerCapture(t *testing.T) {
	s := ServerCapture()
	var buf bytes.Buffer
	st, err := s.WritePcap(&buf)
	if err != nil {
		t.Fatal(err)
	}
	recs := readTrace(t, buf.Bytes(), DefaultSnaplen)
	lan := netip.MustParsePrefix("192.168.40.0/24")
	clients := ServerClients()
	type key struct {
		a, b         netip.Addr
		sport, dport uint16
	}
	first := map[key]uint8{} // the flags of each TCP flow's first packet
	flags := map[key]uint8{} // every flag a flow carried
	data := map[key]int{}    // data packets (longer than a pure ACK) per flow
	var multicast, late int
	for i, r := range recs {
		if r.dst == ServerMDNS {
			multicast++
			continue
		}
		if r.src != ServerAddr && r.dst != ServerAddr {
			t.Fatalf("packet %d: %v -> %v, neither end the server", i, r.src, r.dst)
		}
		if !lan.Contains(r.src) || !lan.Contains(r.dst) {
			t.Fatalf("packet %d: %v -> %v outside %v", i, r.src, r.dst, lan)
		}
		at := r.at.Sub(s.Epoch)
		switch {
		case at < 10*time.Millisecond, at >= 20*time.Second && at < 20*time.Second+10*time.Millisecond:
		case r.proto == layers.IPProtocolUDP && (r.sport == 53 || r.dport == 53):
		default:
			late++
		}
		if r.proto != layers.IPProtocolTCP {
			continue
		}
		k := key{r.src, r.dst, r.sport, r.dport}
		f := r.l4Head[13]
		if _, ok := first[k]; !ok {
			first[k] = f
		}
		flags[k] |= f
		if r.totalLen > MinLength(layers.IPProtocolTCP, false) {
			data[k]++
			want := uint8(0)
			switch {
			case r.dport == 2049 && at < 10*time.Millisecond:
				want = ServerBackupDSCP
			case r.dport == 7000:
				want = ServerSyncDSCP
			}
			if r.dscp != want {
				t.Errorf("packet %d (%v:%d -> %v:%d): DSCP %d, want %d", i, r.src, r.sport, r.dst, r.dport, r.dscp, want)
			}
		}
	}
	if multicast != 3 || late != 0 {
		t.Errorf("%d multicast packets (want 3), %d packets outside the busy periods and DNS", multicast, late)
	}
	if got := st.Last.Sub(st.First); got != 23800*time.Millisecond {
		t.Errorf("the capture spans %v, want 23.8 s", got)
	}
	for i, c := range clients[:12] {
		k := key{c, ServerAddr, uint16(900 + i), 2049}
		if data[k] != 16*21 || first[k]&TCPSyn != 0 || flags[k]&(TCPSyn|TCPFin) != 0 {
			t.Errorf("backup of %v: %d data packets, flags %#x (first %#x): want 336, caught mid-connection", c, data[k], flags[k], first[k])
		}
	}
	lone := key{ServerAddr, clients[12], 2049, 912}
	if data[lone] != 0 || flags[lone] != TCPAck || data[key{clients[12], ServerAddr, 912, 2049}] != 0 {
		t.Errorf("the 13th client: %d data packets to it, flags %#x: want ACKs only, no data either way", data[lone], flags[lone])
	}
	for j, c := range clients[:4] {
		up, down := key{c, ServerAddr, uint16(41000 + j), 2049}, key{ServerAddr, c, 2049, uint16(41000 + j)}
		if first[up] != TCPSyn || flags[up]&TCPFin == 0 || flags[down]&TCPFin == 0 || data[down] != 16*13 {
			t.Errorf("read by %v: first flags %#x, FINs %v %v, %d data packets: want a SYN first, FINs and 208 packets", c, first[up], flags[up]&TCPFin != 0, flags[down]&TCPFin != 0, data[down])
		}
	}
}
