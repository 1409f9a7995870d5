package tracegen

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/internal/units"
)

// TestValidationTracesUpToDate regenerates the traces of testdata/validation
// (docs/validation.md) and compares them byte for byte with the committed files.
func TestValidationTracesUpToDate(t *testing.T) {
	for _, s := range Validation() {
		var buf bytes.Buffer
		if _, err := s.WritePcap(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "..", "testdata", "validation", s.Name)
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (regenerate with: go run ./testdata/pcaps/generate)", err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s differs from its scenario (%d bytes generated, %d committed): "+
				"run go run ./testdata/pcaps/generate and commit the result", path, buf.Len(), len(want))
		}
	}
}

// TestHPCCS1Trace: S1 is what docs/validation.md says: n senders 10.0.0.1.. to
// 10.0.0.17, one RoCEv2 flow each (UDP 4791, DSCP 26, ECT(0)) of 2000 packets of
// 1034 bytes, every packet at time 0 (ties kept), in flow order.
func TestHPCCS1Trace(t *testing.T) {
	for _, n := range []int{16, 1} {
		s := HPCCS1(n)
		var buf bytes.Buffer
		st, err := s.WritePcap(&buf)
		if err != nil {
			t.Fatal(err)
		}
		recs := readTrace(t, buf.Bytes(), 54)
		if len(recs) != n*2000 || st.Flows != n || st.Bytes != int64(n)*2000*1034 {
			t.Fatalf("HPCCS1(%d): %d packets, %d flows, %d bytes", n, len(recs), st.Flows, st.Bytes)
		}
		recv := HostAddr(0, 0, 16)
		for i, r := range recs {
			src := HostAddr(0, 0, i/2000)
			if !r.at.Equal(epoch) || r.src != src || r.dst != recv || r.totalLen != 1034 || r.dport != RoCEPort ||
				r.dscp != 26 || r.ecn != ECT0 {
				t.Fatalf("HPCCS1(%d) packet %d: %v %v -> %v:%d, length %d, DSCP %d ECN %d", n, i, r.at, r.src, r.dst, r.dport,
					r.totalLen, r.dscp, r.ecn)
			}
			checkClass(t, i, &r)
		}
	}
}

// Ties: the timestamper keeps a repeated nanosecond instead of moving it 1 ns later,
// but still never goes back in time.
func TestTimestamperTies(t *testing.T) {
	for _, c := range []struct {
		ties bool
		want []int64 // ns
	}{{false, []int64{0, 1, 2, 3, 5}}, {true, []int64{0, 0, 0, 1, 5}}} {
		ts := Timestamper{Epoch: epoch, Ties: c.ties}
		for i, ps := range []units.Time{0, 0, 0, 1, 5000} {
			if got := ts.Next(ps); !got.Equal(epoch.Add(time.Duration(c.want[i]))) {
				t.Errorf("ties %v, packet %d at %d ps: %v, want +%d ns", c.ties, i, ps, got, c.want[i])
			}
		}
	}
}

// A flow AtOnce has no pacing to set.
func TestFlowAtOnceChecked(t *testing.T) {
	f := newFlow(RoCEv2, HostAddr(0, 0, 0), HostAddr(0, 0, 1), 49152, RoCEPort)
	f.Packets, f.Length, f.AtOnce = 3, 1034, true
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	f.Rate = LineRate
	if err := f.Check(); !errors.Is(err, ErrPacket) {
		t.Fatalf("AtOnce with a rate: %v", err)
	}
}
