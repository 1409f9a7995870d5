package export

import (
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// zstdCodec is the Parquet zstd codec while this package is linked in. Arrow Go v17's
// own codec compresses every page with a new zstd encoder (its EncodeLevel calls
// zstd.NewWriter each time), whose history buffers are garbage after one page: half a
// gigabyte of allocations per million packets.arrow rows and a peak RSS of 220 MB
// where the data needs a third of that. This one compresses every page with one
// shared encoder of the same settings (zstd's default level, no empty frames), so the
// bytes are the same; reading and streaming go to the library's codec.
type zstdCodec struct {
	compress.Codec // Arrow's, for decoding, streams and levels other than the default
	enc            *zstd.Encoder
}

func (c zstdCodec) Encode(dst, src []byte) []byte { return c.enc.EncodeAll(src, dst[:0]) }

func (c zstdCodec) EncodeLevel(dst, src []byte, level int) []byte {
	if level != compress.DefaultCompressionLevel {
		return c.Codec.EncodeLevel(dst, src, level)
	}
	return c.Encode(dst, src)
}

func init() {
	lib, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return // no zstd in this Arrow build: keep whatever there is
	}
	// EncodeAll is safe for concurrent use; one encoder suffices (pages are
	// compressed one at a time per file, and files are exported one at a time).
	enc, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return
	}
	compress.RegisterCodec(compress.Codecs.Zstd, zstdCodec{Codec: lib, enc: enc})
}
