package ingest

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestCorruptFiles: corrupt files are errors naming the file and the packet index
// or byte offset; truncated last records are warnings.
func TestCorruptFiles(t *testing.T) {
	frame := ether(t, ipSpec{src: "10.0.0.1", dst: "10.0.0.2", sport: 1, dport: 2, payload: 30}) // 84 bytes
	three := pcapFile(t, LinkEthernet, false, 65535, rec{ts: at(1), frame: frame}, rec{ts: at(2), frame: frame}, rec{ts: at(3), frame: frame})
	recSize := 16 + len(frame)
	rec2 := 24 + 2*recSize // byte offset of record 2
	set32 := func(b []byte, off int, v uint32) []byte {
		b = append([]byte(nil), b...)
		binary.LittleEndian.PutUint32(b[off:], v)
		return b
	}
	ng := func(f func(b *ngb)) []byte {
		b := &ngb{}
		b.shb().idb(LinkEthernet, 0, 9)
		b.epb(0, 1, frame, 0)
		f(b)
		return b.out
	}
	ngPkt1 := len(ng(func(*ngb) {})) // offset of the second packet block
	type want struct {
		errParts []string // all must appear in the error; nil: no error
		warn     string   // must appear in a warning; "" none
		packets  int      // IPv4 packets read before the end or the error
	}
	cases := []struct {
		name string
		data []byte
		want want
	}{
		{"bad magic", []byte("GIF89a not a capture, just some bytes here"), want{errParts: []string{"mem0.pcap", "not a pcap or pcapng file", "47 49 46 38"}}},
		{"too short for a header", []byte{0xd4, 0xc3}, want{errParts: []string{"mem0.pcap", "too short"}}},
		{"pcap header cut", three[:20], want{errParts: []string{"mem0.pcap", "20 of 24 bytes"}}},
		{"pcap bad version", set32(three, 4, 0x00030007), want{errParts: []string{"mem0.pcap", "version"}}},
		{"record length over the cap", set32(three, rec2+8, 0x7FFFFFF0), want{
			errParts: []string{"mem0.pcap", "packet 2", "byte offset " + itoa(rec2), "claims 2147483632 captured bytes, over the 262144-byte limit"}, packets: 2}},
		{"captured length over the wire length", set32(three, rec2+8, uint32(len(frame)+1)), want{
			errParts: []string{"mem0.pcap", "packet 2", "byte offset " + itoa(rec2), "claims 85 captured bytes of a 84-byte packet"}, packets: 2}},
		{"truncated last record (data)", three[:len(three)-10], want{warn: "mem0.pcap: packet 2 at byte offset " + itoa(rec2) + " is truncated", packets: 2}},
		{"truncated last record (header)", three[:rec2+7], want{warn: "packet 2 at byte offset " + itoa(rec2) + " is truncated", packets: 2}},
		{"gzip truncated", gz(t, three)[:60], want{warn: "is truncated"}},
		{"gzip corrupt", func() []byte { g := gz(t, three); g[len(g)-6] ^= 0xFF; return g }(), want{errParts: []string{"mem0.pcap", "decompressed"}, packets: 3}},

		{"pcapng lying block length", func() []byte {
			b := ng(func(b *ngb) { b.epb(0, 2, frame, 0) })
			binary.LittleEndian.PutUint32(b[ngPkt1+4:], uint32(len(b)-ngPkt1-8)) // shorter than the block
			return b
		}(), want{errParts: []string{"mem0.pcap", "packet 1", "byte offset " + itoa(ngPkt1), "trailing length"}, packets: 1}},
		{"pcapng block length not a multiple of 4", func() []byte {
			b := ng(func(b *ngb) { b.epb(0, 2, frame, 0) })
			binary.LittleEndian.PutUint32(b[ngPkt1+4:], 118)
			return b
		}(), want{errParts: []string{"byte offset " + itoa(ngPkt1), "not a multiple of 4"}, packets: 1}},
		{"pcapng huge block length", func() []byte {
			b := ng(func(b *ngb) { b.epb(0, 2, frame, 0) })
			binary.LittleEndian.PutUint32(b[ngPkt1+4:], 0xFFFFFF00)
			return b
		}(), want{errParts: []string{"byte offset " + itoa(ngPkt1), "over the"}, packets: 1}},
		{"pcapng captured length outside its block", func() []byte {
			b := ng(func(b *ngb) { b.epb(0, 2, frame, 0) })
			binary.LittleEndian.PutUint32(b[ngPkt1+20:], 0x40000000)
			return b
		}(), want{errParts: []string{"packet 1", "captured length 1073741824"}, packets: 1}},
		{"pcapng captured length over the cap", func() []byte {
			b := ng(func(b *ngb) { b.epb(0, 2, make([]byte, MaxSnaplen+1), 0) })
			return b
		}(), want{errParts: []string{"packet 1", "captured length 262145", "limit is 262144"}, packets: 1}},
		{"pcapng undeclared interface", ng(func(b *ngb) { b.epb(3, 2, frame, 0) }), want{errParts: []string{"packet 1", "interface 3"}, packets: 1}},
		{"pcapng if_tsresol out of range", func() []byte { b := &ngb{}; b.shb().idb(LinkEthernet, 0, 100); return b.out }(), want{errParts: []string{"block before packet 0 at byte offset 28", "if_tsresol 0x64"}}},
		{"pcapng binary if_tsresol out of range", func() []byte { b := &ngb{}; b.shb().idb(LinkEthernet, 0, 0x80|64); return b.out }(), want{errParts: []string{"if_tsresol 0xc0"}}},
		{"pcapng option past its block", func() []byte {
			b := &ngb{}
			b.shb().idb(LinkEthernet, 0, -1, b.opt(2, []byte("eth0")))
			binary.LittleEndian.PutUint16(b.out[28+16+2:], 200) // if_name claims 200 bytes
			return b.out
		}(), want{errParts: []string{"option 2", "past its block"}}},
		{"pcapng bad byte-order magic", func() []byte { b := (&ngb{}).shb(); b.out[8] = 0; return b.out }(), want{errParts: []string{"byte-order magic"}}},
		{"pcapng packet before any interface", func() []byte { b := (&ngb{}).shb(); b.epb(0, 1, frame, 0); return b.out }(), want{errParts: []string{"interface 0", "declares 0"}}},
		{"pcapng skipped block with bad trailer", ng(func(b *ngb) {
			b.block(5, make([]byte, 20))
			binary.LittleEndian.PutUint32(b.out[len(b.out)-4:], 8)
		}), want{errParts: []string{"block before packet 1 at byte offset " + itoa(ngPkt1), "trailing length says 8"}, packets: 1}},
		{"pcapng truncated last block", ng(func(b *ngb) { b.epb(0, 2, frame, 0); b.out = b.out[:len(b.out)-5] }),
			want{warn: "packet 1 at byte offset " + itoa(ngPkt1) + " is truncated", packets: 1}},
		{"pcapng truncated block header", ng(func(b *ngb) { b.out = append(b.out, 6, 0, 0) }), want{warn: "is truncated", packets: 1}},
		{"pcapng section without interfaces", (&ngb{}).shb().out, want{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// File order, so that the packets before a corrupt record come out before
			// the error (with a reorder window they wait in the buffer and the
			// error, which ends the read, comes first).
			pkts, _, warns, err := readAll(t, Options{ReorderWindow: -1}, c.data)
			if c.want.errParts == nil && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if c.want.errParts != nil {
				if err == nil {
					t.Fatalf("no error; %d packets, warnings %q", len(pkts), warns)
				}
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("error does not wrap ErrCorrupt: %v", err)
				}
				for _, part := range c.want.errParts {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q lacks %q", err, part)
					}
				}
			}
			if len(pkts) != c.want.packets {
				t.Errorf("%d packets before the end, want %d", len(pkts), c.want.packets)
			}
			joined := strings.Join(warns, "\n")
			if c.want.warn == "" && joined != "" || c.want.warn != "" && !strings.Contains(joined, c.want.warn) {
				t.Errorf("warnings %q, want %q", joined, c.want.warn)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
