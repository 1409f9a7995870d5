package ingest

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Compressed captures are recognised by their first bytes, whatever the file is
// called: gzip, bzip2, xz and zstd are decompressed as the capture is read (a stream:
// nothing is written to disk). Formats that cannot be read (lz4, 7-Zip, zip, ...) are
// named in the error with what to do, rather than reported as an unknown magic number.

// sniffLen is how many leading bytes the format checks look at (a tar header's
// "ustar" magic sits at offset 257).
const sniffLen = 264

// decompressor is a compressed format ingest reads.
type decompressor struct {
	name  string
	magic []byte
	// open returns the decompressed stream and a function that releases it.
	open func(r io.Reader) (io.Reader, func(), error)
}

var decompressors = []decompressor{
	{"gzip", []byte{0x1f, 0x8b}, func(r io.Reader) (io.Reader, func(), error) {
		z, err := gzip.NewReader(r) // concatenated members are read as one stream
		return z, nil, err
	}},
	{"bzip2", []byte("BZh"), func(r io.Reader) (io.Reader, func(), error) {
		return bzip2.NewReader(r), nil, nil
	}},
	{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}, func(r io.Reader) (io.Reader, func(), error) {
		z, err := xz.NewReader(r)
		return z, nil, err
	}},
	{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd}, func(r io.Reader) (io.Reader, func(), error) {
		z, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, nil, err
		}
		return z, z.Close, nil
	}},
}

// compressionOf returns the decompressor of a stream starting with head, or nil.
func compressionOf(head []byte) *decompressor {
	for i := range decompressors {
		if bytes.HasPrefix(head, decompressors[i].magic) {
			return &decompressors[i]
		}
	}
	return nil
}

// unsupported are formats recognised by their first bytes but not read.
var unsupported = []struct {
	magic      []byte
	offset     int
	what       string
	decompress string // the command that turns it into a capture
}{
	{[]byte{0x04, 0x22, 0x4d, 0x18}, 0, "lz4 frame", "decompress first (lz4 -d FILE)"},
	{[]byte{0x02, 0x21, 0x4c, 0x18}, 0, "lz4 legacy frame", "decompress first (lz4 -d FILE)"},
	{[]byte{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c}, 0, "7-Zip archive", "extract the capture first (7z x FILE)"},
	{[]byte{'P', 'K', 0x03, 0x04}, 0, "zip archive", "extract the capture first (unzip FILE)"},
	{[]byte("Rar!\x1a\x07"), 0, "RAR archive", "extract the capture first"},
	{[]byte("LZIP"), 0, "lzip", "decompress first (lzip -d FILE)"},
	{[]byte{0x1f, 0x9d}, 0, "compress (.Z)", "decompress first (uncompress FILE)"},
	{[]byte{0xff, 0x06, 0x00, 0x00, 's', 'N', 'a', 'P', 'p', 'Y'}, 0, "snappy frame", "decompress first"},
	{[]byte("ustar"), 257, "tar archive", "extract the capture first (tar xf FILE)"},
}

// unsupportedFormat names the format of a stream starting with head when ingest
// recognises but does not read it, with what to do; "" otherwise.
func unsupportedFormat(head []byte) (what, hint string) {
	for _, u := range unsupported {
		if len(head) >= u.offset && bytes.HasPrefix(head[u.offset:], u.magic) {
			return u.what, u.decompress
		}
	}
	return "", ""
}

// Rereadable reports whether the capture at path can be read again at the cost of
// decoding it alone: a regular file (or standard input, which the command keeps as a
// file) whose first bytes are not a compressed format. A named pipe cannot be read
// twice, and a compressed file would be decompressed again. It reads the file's
// first bytes only; a file it cannot read is reported not rereadable (the pass that
// reads it names the error).
func Rereadable(path string, opt *Options) bool {
	var f *os.File
	if path == StdinPath {
		if f = opt.Stdin; f == nil {
			return false
		}
	} else {
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			return false
		}
		if f, err = os.Open(path); err != nil {
			return false
		}
		defer f.Close()
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	head := make([]byte, 8)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	return compressionOf(head[:n]) == nil
}
