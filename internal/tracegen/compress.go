package tracegen

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/dsnet/compress/bzip2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"

	"github.com/tracefabric/tracefabric/internal/atomicfile"
)

// Compression is a compressed container for a trace, as capture files are often
// shipped: the fixtures of ingest's decompression (the formats it reads, and lz4, a
// format it names and refuses).
type Compression string

// The compressions Compress writes.
const (
	Gzip  Compression = "gzip"
	Bzip2 Compression = "bzip2"
	Xz    Compression = "xz"
	Zstd  Compression = "zstd"
	LZ4   Compression = "lz4" // lz4 frame format
)

// Compressions lists every Compression, in a fixed order.
var Compressions = []Compression{Gzip, Bzip2, Xz, Zstd, LZ4}

// Ext is the usual file name extension of the compression (".gz", ".bz2", ...).
func (c Compression) Ext() string {
	switch c {
	case Gzip:
		return ".gz"
	case Bzip2:
		return ".bz2"
	case Xz:
		return ".xz"
	case Zstd:
		return ".zst"
	case LZ4:
		return ".lz4"
	}
	return ""
}

// NewCompressor returns a writer that compresses into w with c; Close flushes the
// compressed stream (it does not close w). bzip2 and xz compress in blocks (100 kB,
// as bzip2 -1 does; 64 KiB, as a multi-threaded xz does), so that a stream cut
// short still holds complete blocks: a reader recovers no part of a block it did
// not read whole.
func NewCompressor(w io.Writer, c Compression) (io.WriteCloser, error) {
	switch c {
	case Gzip:
		return gzip.NewWriter(w), nil
	case Bzip2:
		return bzip2.NewWriter(w, &bzip2.WriterConfig{Level: 1})
	case Xz:
		return xz.WriterConfig{BlockSize: 64 << 10}.NewWriter(w)
	case Zstd:
		return zstd.NewWriter(w, zstd.WithEncoderConcurrency(1))
	case LZ4:
		return lz4.NewWriter(w), nil
	}
	return nil, fmt.Errorf("tracegen: unknown compression %q (want one of %v)", c, Compressions)
}

// Compress returns data compressed with c.
func Compress(data []byte, c Compression) ([]byte, error) {
	var b bytes.Buffer
	zw, err := NewCompressor(&b, c)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, fmt.Errorf("tracegen: %s: %w", c, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("tracegen: %s: %w", c, err)
	}
	return b.Bytes(), nil
}

// CompressFile writes the file src compressed with c to dst, atomically.
func CompressFile(dst, src string, c Compression) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("tracegen: %w", err)
	}
	defer in.Close()
	err = atomicfile.Write(dst, func(w io.Writer) error {
		zw, err := NewCompressor(w, c)
		if err != nil {
			return err
		}
		if _, err := io.Copy(zw, in); err != nil {
			return err
		}
		return zw.Close()
	})
	if err != nil {
		return fmt.Errorf("tracegen: %w", err)
	}
	return nil
}
