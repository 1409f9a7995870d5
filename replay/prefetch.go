package replay

import (
	"sync"

	"github.com/tracefabric/tracefabric/ingest"
)

// Reading ahead: the run pass decodes the capture on a goroutine of its own, a batch
// of packets at a time, so that reading overlaps with the simulation when a second
// core is free. The packets, their order and the errors are the reader's; the batches
// are recycled (no allocation per batch) and at most prefetchBatches of them exist, so
// memory stays bounded.
const (
	prefetchBatch   = 1024 // packets per batch
	prefetchBatches = 4
)

type packetBatch struct {
	pkts []ingest.Packet
	n    int   // packets in pkts
	last bool  // the reader ended after these packets
	err  error // ... with this error (nil: end of the trace)
}

// prefetcher reads packets from an ingest.Reader on its own goroutine. Next and Close
// are called from one goroutine (the simulation's).
type prefetcher struct {
	r    *ingest.Reader
	full chan *packetBatch
	free chan *packetBatch
	done chan struct{}
	wg   sync.WaitGroup
	cur  *packetBatch
	i    int
}

func newPrefetcher(r *ingest.Reader) *prefetcher {
	f := &prefetcher{r: r, full: make(chan *packetBatch, prefetchBatches),
		free: make(chan *packetBatch, prefetchBatches), done: make(chan struct{})}
	for range prefetchBatches {
		f.free <- &packetBatch{pkts: make([]ingest.Packet, prefetchBatch)}
	}
	f.wg.Add(1)
	go f.read()
	return f
}

func (f *prefetcher) read() {
	defer f.wg.Done()
	for {
		var b *packetBatch
		select {
		case b = <-f.free:
		case <-f.done:
			return
		}
		b.n = 0
		for b.n < len(b.pkts) {
			ok, err := f.r.Next(&b.pkts[b.n])
			if err != nil || !ok {
				b.last, b.err = true, err
				break
			}
			b.n++
		}
		select {
		case f.full <- b:
		case <-f.done:
			return
		}
		if b.last {
			return
		}
	}
}

// Next stores the next packet in *p, like ingest.Reader.Next.
func (f *prefetcher) Next(p *ingest.Packet) (bool, error) {
	for {
		if b := f.cur; b != nil {
			if f.i < b.n {
				*p = b.pkts[f.i]
				f.i++
				return true, nil
			}
			if b.last {
				return false, b.err
			}
			f.free <- b
			f.cur = nil
		}
		f.cur, f.i = <-f.full, 0
	}
}

// Close stops the reading goroutine and closes the reader.
func (f *prefetcher) Close() error {
	close(f.done)
	f.wg.Wait()
	return f.r.Close()
}
