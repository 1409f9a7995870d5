package ingest

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/tracegen"
)

// manyPackets is a classic pcap of n UDP packets 1 us apart over 16 flows: about
// 100 bytes a packet, so 2000 packets make more than one 100-kB compression block.
func manyPackets(t testing.TB, n int) []byte {
	t.Helper()
	var recs []rec
	for i := range n {
		f := ether(t, ipSpec{proto: layers.IPProtocolUDP, sport: uint16(1000 + i%16), dport: 4791, payload: 40 + i%7})
		recs = append(recs, rec{ts: at(int64(i)), frame: f})
	}
	return pcapFile(t, LinkEthernet, true, 65535, recs...)
}

// The readable compressions are recognised by content (the files have no
// extension) and give the summary of the uncompressed capture; the format says
// which compression it was.
func TestCompressedCaptures(t *testing.T) {
	plain := manyPackets(t, 2000)
	want, err := Summarize([]string{writeTemp(t, "plain", plain)}, Options{})
	if err != nil || want.IPv4Packets != 2000 {
		t.Fatalf("plain capture: %v, %+v", err, want)
	}
	for _, c := range []tracegen.Compression{tracegen.Gzip, tracegen.Bzip2, tracegen.Xz, tracegen.Zstd} {
		t.Run(string(c), func(t *testing.T) {
			data, err := tracegen.Compress(plain, c)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(data, plain[:24]) {
				t.Fatal("the fixture is not compressed")
			}
			got, err := Summarize([]string{writeTemp(t, "capture", data)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got.IPv4Packets != want.IPv4Packets || got.Flows != want.Flows || got.Bytes != want.Bytes ||
				got.FirstTS != want.FirstTS || got.LastTS != want.LastTS {
				t.Errorf("summary %+v, want that of the plain capture %+v", got, want)
			}
			if f := got.Files[0].Format; f != "pcap+"+string(c) {
				t.Errorf("format %q, want pcap+%s", f, c)
			}
		})
	}
}

// A compressed capture cut short is a truncated capture: a warning and the packets
// before the cut, or with Strict an error (ErrTruncated, which is ErrCorrupt).
func TestCompressedTruncated(t *testing.T) {
	plain := manyPackets(t, 3000)
	for _, c := range []tracegen.Compression{tracegen.Gzip, tracegen.Bzip2, tracegen.Xz, tracegen.Zstd} {
		t.Run(string(c), func(t *testing.T) {
			data, err := tracegen.Compress(plain, c)
			if err != nil {
				t.Fatal(err)
			}
			cut := data[:len(data)*3/4]
			pkts, _, warns, err := readAll(t, Options{}, cut)
			if err != nil {
				t.Fatalf("not strict: %v", err)
			}
			if len(pkts) == 0 || len(pkts) >= 3000 || len(warns) != 1 || !strings.Contains(warns[0], "truncated") {
				t.Errorf("%d packets, warnings %q: want some packets and one truncation warning", len(pkts), warns)
			}
			_, _, _, err = readAll(t, Options{Strict: true}, cut)
			if !errors.Is(err, ErrTruncated) || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "decompressed ("+string(c)+")") {
				t.Errorf("strict: %v, want ErrTruncated naming the %s data", err, c)
			}
			// Cut inside the first compression block: nothing to use, an error either way.
			_, _, _, err = readAll(t, Options{}, data[:len(data)/10])
			if c != tracegen.Gzip && c != tracegen.Zstd && (!errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), string(c)+" data ends before")) {
				t.Errorf("cut in the first block: %v", err)
			}
		})
	}
}

// Formats that are recognised but not read say what they are and what to do.
func TestUnsupportedFormats(t *testing.T) {
	plain := manyPackets(t, 10)
	lz, err := tracegen.Compress(plain, tracegen.LZ4)
	if err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("capture.pcap")
	w.Write(plain)
	zw.Close()
	tarHead := make([]byte, 512)
	copy(tarHead[257:], "ustar\x0000")
	lzInGzip, err := tracegen.Compress(lz, tracegen.Gzip)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"lz4", lz, "lz4 frame: not supported; decompress first"},
		{"zip", zb.Bytes(), "zip archive: not supported; extract the capture first"},
		{"7z", append([]byte{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c}, make([]byte, 30)...), "7-Zip archive: not supported"},
		{"tar", tarHead, "tar archive: not supported"},
		{"lz4 in gzip", lzInGzip, "lz4 frame inside gzip: not supported"},
		{"text", []byte("timestamp,src,dst\n1,10.0.0.1,10.0.0.2\n"), "not a pcap or pcapng file (it starts with the bytes 74 69 6d 65)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeTemp(t, "capture", c.data)
			_, err := Summarize([]string{path}, Options{})
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("error %v, want %q after the path", err, c.want)
			}
			if strings.Contains(err.Error(), "magic 0x") || strings.Contains(err.Error(), "ingest") {
				t.Errorf("error %q speaks of magic numbers or packages", err)
			}
		})
	}
}

// "-" reads Options.Stdin (a file the command copied standard input to); several
// readers share it, and messages call it standard input.
func TestStdin(t *testing.T) {
	data, err := tracegen.Compress(manyPackets(t, 50), tracegen.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(writeTemp(t, "stdin", data))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range 2 { // Summarize reads it, then the replay reads it again
		s, err := Summarize([]string{StdinPath}, Options{Stdin: f})
		if err != nil || s.IPv4Packets != 50 || s.Files[0].Path != "-" {
			t.Fatalf("%v %+v", err, s)
		}
	}
	if _, err := Open([]string{StdinPath}, Options{}); err == nil || !strings.Contains(err.Error(), "standard input") {
		t.Errorf("without Options.Stdin: %v", err)
	}
	bad, _ := os.Open(writeTemp(t, "stdin-bad", []byte("not a capture, not at all")))
	defer bad.Close()
	if _, err := Open([]string{StdinPath}, Options{Stdin: bad}); err == nil || !strings.HasPrefix(err.Error(), "standard input: ") {
		t.Errorf("bad standard input: %v", err)
	}
}

// A plain capture cut inside a packet: a warning, or with Strict an error.
func TestStrictTruncated(t *testing.T) {
	data := manyPackets(t, 5)
	cut := data[:len(data)-10]
	pkts, _, warns, err := readAll(t, Options{}, cut)
	if err != nil || len(pkts) != 4 || len(warns) != 1 || !strings.Contains(warns[0], "packet 4") || !strings.Contains(warns[0], "the packets before it are used") {
		t.Errorf("not strict: %d packets, %q, %v", len(pkts), warns, err)
	}
	_, _, _, err = readAll(t, Options{Strict: true}, cut)
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "packet 4") {
		t.Errorf("strict: %v", err)
	}
}
