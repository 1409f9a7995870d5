package tracegen

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestBenchmarkMatchesEncoder checks the fast path against gopacket: every frame
// WriteBenchmark patches from a template equals what the Encoder serializes for the
// same packet (sequence numbers and TCP checksums included).
func TestBenchmarkMatchesEncoder(t *testing.T) {
	b := Benchmark{Packets: 20000, Seed: 5}
	var buf bytes.Buffer
	st, err := WriteBenchmark(&buf, b)
	if err != nil {
		t.Fatal(err)
	}
	recs := readTrace(t, buf.Bytes(), DefaultSnaplen)
	if len(recs) != b.Packets || st.Packets != int64(b.Packets) || st.Flows != 4096 {
		t.Fatalf("%d packets read, stats %+v", len(recs), st)
	}
	g, _, err := newBenchGen(&b)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := NewEncoder(0)
	ts := Timestamper{Epoch: epoch}
	var tcp, sum int64
	for i := range recs {
		tm, f, tmpl := g.next()
		p := f.packet(tm, tmpl.length)
		p.Seq = f.seq
		f.seq += uint32(tmpl.length - minLength(f.Proto))
		want, n, err := enc.Encode(&p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(recs[i].raw, want) || recs[i].origLen != n {
			t.Fatalf("packet %d (%v seq %d): fast path\n%x (%d)\nencoder\n%x (%d)", i, p.Proto, p.Seq, recs[i].raw, recs[i].origLen, want, n)
		}
		if at := ts.Next(tm); !recs[i].at.Equal(at) || (i > 0 && !at.After(recs[i-1].at)) {
			t.Fatalf("packet %d: timestamp %v, want %v, strictly after the previous", i, recs[i].at, at)
		}
		if !l4ChecksumOK(&recs[i]) {
			t.Fatalf("packet %d: bad L4 checksum", i)
		}
		if p.Proto == 6 {
			tcp++
		}
		sum += int64(p.Length)
	}
	if tcp == 0 || sum != st.Bytes {
		t.Fatalf("%d TCP packets, bytes %d vs stats %d", tcp, sum, st.Bytes)
	}
	// Offered load: bytes in wire bits over the trace's duration, near the 3.2 Tb/s asked.
	dur := st.Last.Sub(st.First).Seconds()
	wireBits := float64(sum+int64(len(recs))*WireOverhead) * 8
	if rate := wireBits / dur; rate < 3.0e12 || rate > 3.4e12 {
		t.Errorf("offered load %.3g b/s, want about 3.2e12", rate)
	}
}

func TestWriteBenchmarkFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.pcap")
	if _, err := WriteBenchmarkFile(path, Benchmark{Packets: 10, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteBenchmarkFile(path, Benchmark{Packets: 0}); err == nil {
		t.Fatal("0 packets: no error")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("directory holds %d entries after a failed write, want only b.pcap", len(ents))
	}
	data, _ := os.ReadFile(path)
	if n := len(readTrace(t, data, DefaultSnaplen)); n != 10 {
		t.Fatalf("%d packets", n)
	}
	// Never rename over something that is not a regular file (say /dev/stdout).
	if _, err := WriteBenchmarkFile(dir, Benchmark{Packets: 1}); err == nil {
		t.Fatal("writing over a directory: no error")
	}
	if _, err := WriteBenchmarkFile(os.DevNull, Benchmark{Packets: 1}); err == nil {
		t.Fatalf("writing over %s: no error", os.DevNull)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("%s damaged: %v %v", os.DevNull, fi, err)
	}
	link := filepath.Join(dir, "link.pcap") // a symbolic link to a regular file
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteBenchmarkFile(link, Benchmark{Packets: 1}); err == nil {
		t.Fatal("writing over a symbolic link: no error")
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("symbolic link replaced: %v %v", fi, err)
	}
}

// BenchmarkWriteBenchmark measures the fast path (ns/op is per packet).
func BenchmarkWriteBenchmark(b *testing.B) {
	b.ReportAllocs()
	st, err := WriteBenchmark(io.Discard, Benchmark{Packets: b.N, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.Packets)/b.Elapsed().Seconds(), "packets/s")
}

// BenchmarkEncoder measures gopacket serialization of one 9000-byte TCP packet.
func BenchmarkEncoder(b *testing.B) {
	enc, _ := NewEncoder(0)
	p := Packet{Src: HostAddr(0, 0, 0), Dst: HostAddr(1, 0, 0), Proto: 6, SrcPort: 40000, DstPort: 5201, Length: MaxLength}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p.Seq += 8960
		if _, _, err := enc.Encode(&p); err != nil {
			b.Fatal(err)
		}
	}
}
