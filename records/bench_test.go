package records

import (
	"path/filepath"
	"testing"
)

// benchAppend measures Append per row, record batch writes included (default batch
// size); rows are prepared before the timer starts.
func benchAppend[R any](b *testing.B, create func(string, Dictionaries, ...Option) (*Writer[R], error), gen func(int) R) {
	rows := make([]R, 1024)
	for i := range rows {
		rows[i] = gen(i)
	}
	w, err := create(filepath.Join(b.TempDir(), "bench.arrow"), testNodes)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := w.Append(&rows[i%len(rows)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkAppendDrops(b *testing.B)    { benchAppend(b, NewDropsWriter, genDrop) }
func BenchmarkAppendPFC(b *testing.B)      { benchAppend(b, NewPFCWriter, genPFC) }
func BenchmarkAppendPackets(b *testing.B)  { benchAppend(b, NewPacketsWriter, genPacket) }
func BenchmarkAppendFlows(b *testing.B)    { benchAppend(b, NewFlowsWriter, genFlow) }
func BenchmarkAppendMessages(b *testing.B) { benchAppend(b, NewMessagesWriter, genMessage) }

// BenchmarkReadDrops measures streaming a drops file back with Next, per row.
func BenchmarkReadDrops(b *testing.B) {
	c := fileCase[DropRow]{DropsFile, NewDropsWriter, OpenDrops, genDrop}
	path := c.write(b, b.TempDir(), 200_000, DefaultBatchRows)
	b.ReportAllocs()
	b.ResetTimer()
	var row DropRow
	for n := 0; n < b.N; {
		rd, err := OpenDrops(path)
		if err != nil {
			b.Fatal(err)
		}
		for n < b.N && rd.Next(&row) {
			n++
		}
		if err := rd.Err(); err != nil {
			b.Fatal(err)
		}
		rd.Close()
	}
}
