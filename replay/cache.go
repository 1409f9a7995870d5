package replay

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/tracefabric/tracefabric/internal/config"
)

// A trace cache holds a prepared trace's arrivals in memory, decoded once, for the
// replays that share the preparation (the points of a sweep, Derive): each replays
// from memory instead of reading and decoding the capture again on a goroutine of its
// own, which on a machine whose cores all run replays is CPU taken from them. What
// differs between the replays is applied as they read it: the injection time (the
// speedup) and which captured control packets a closed-loop run replaces (the
// transport settings). The records are those of a replay that reads the capture
// (TestCachedTraceEqualsStreamed).

// cachedPacket is one arrival of the cache: 32 bytes. What is the same for every
// packet of a flow (addresses, ports, protocol, hosts) is kept once per flow.
type cachedPacket struct {
	off        int64 // capture time after T0, ns, idle gaps shortened (injection time at speedup 1)
	traceIndex int64
	fid        int32  // flow id; noFlow for an intra-host packet
	length     uint32 // L
	payload    uint32 // TCP payload bytes
	dscp, ecn  uint8
	control    uint8 // the captured control packet it is (replacedTCPAck, ...), whatever the transport settings
}

// traceCache is a prepared trace in memory.
type traceCache struct {
	packets []cachedPacket
	first   []arrival // per flow id: its first packet (the per-flow fields)
}

// CacheEntryBytes is what a trace cache takes per replayed packet; each flow adds
// CacheFlowBytes.
const (
	CacheEntryBytes = int64(unsafe.Sizeof(cachedPacket{}))
	CacheFlowBytes  = int64(unsafe.Sizeof(arrival{}))
)

// CacheBytes estimates the memory CacheTrace would take for pr's trace.
func (pr *Prepared) CacheBytes() int64 {
	return pr.Summary.IPPackets()*CacheEntryBytes + pr.Summary.Flows*CacheFlowBytes
}

// ErrCacheTooLarge: the trace would take more memory than CacheTrace was allowed.
var ErrCacheTooLarge = errors.New("the trace does not fit in the cache's memory")

// CacheTrace reads pr's trace once into memory (CacheBytes, at most maxBytes, else
// ErrCacheTooLarge and no cache) for pr's Run and for every Prepared derived from pr
// afterwards (Derive). It must be called before they run.
func (pr *Prepared) CacheTrace(maxBytes int64) error {
	if pr.cache != nil {
		return nil
	}
	if need := pr.CacheBytes(); need > maxBytes {
		return fmt.Errorf("%w: %d bytes needed, %d allowed", ErrCacheTooLarge, need, maxBytes)
	}
	// Read as a closed-loop replay at speedup 1 whose every transport is closed loop:
	// injection times are then the offsets (ns, exactly), and every captured control
	// packet is marked with its kind.
	src := &Prepared{Opt: pr.Opt, Summary: pr.Summary, Topo: pr.Topo, HostMap: pr.HostMap, T0: pr.T0, Idle: pr.Idle,
		fileOffset: pr.fileOffset}
	src.Opt.Speedup = 1
	cfg := *pr.Opt.Config
	cfg.Transport.Mode, cfg.Transport.Tcp, cfg.Transport.Roce = config.TransportClosed, config.TcpAuto, config.RoceDcqcn
	src.Opt.Config = &cfg
	r, err := openTrace(src)
	if err != nil {
		return err
	}
	f, err := newFeed(src, r, nil)
	if err != nil {
		return err
	}
	c := &traceCache{packets: make([]cachedPacket, 0, pr.Summary.IPPackets())}
	for {
		a, err := f.Next()
		if err != nil {
			f.Close()
			if interrupted(err) {
				return err
			}
			return inputErrf("%w", err)
		}
		if a == nil {
			break
		}
		c.packets = append(c.packets, cachedPacket{off: int64(a.at) / 1000, traceIndex: a.traceIndex, fid: a.fid,
			length: a.length, payload: a.payload, dscp: a.dscp, ecn: a.ecn, control: a.replaced})
		if a.fid != noFlow && int(a.fid) == len(c.first) {
			first := *a
			first.at, first.traceIndex, first.length, first.payload, first.dscp, first.ecn, first.replaced = 0, 0, 0, 0, 0, 0, 0
			c.first = append(c.first, first)
		}
	}
	if err := f.Close(); err != nil {
		return inputErrf("%w", err)
	}
	pr.cache = c
	return nil
}

// arrivals is where a run takes its trace's arrivals from: the capture (feed) or a
// trace cache (cacheFeed).
type arrivals interface {
	// Next returns the next arrival (valid until the following call), or nil at the
	// end of the trace or with an error.
	Next() (*arrival, error)
	Close() error
}

// cacheFeed replays a trace cache with its Prepared's speedup and transport.
type cacheFeed struct {
	pr     *Prepared
	c      *traceCache
	i      int
	a      arrival
	closed bool
	tcp    bool         // closed loop replaces captured TCP pure ACKs
	roce   bool         // ... and RoCEv2 ACKs, NAKs and CNPs
	load   *offeredLoad // the run's offered load
}

func newCacheFeed(pr *Prepared, load *offeredLoad) *cacheFeed {
	tr := &pr.Opt.Config.Transport
	closed := pr.closedLoop()
	return &cacheFeed{pr: pr, c: pr.cache, closed: closed, load: load,
		tcp: closed && tr.Tcp != config.TcpOpen, roce: closed && tr.Roce != config.RoceOpen}
}

func (f *cacheFeed) Next() (*arrival, error) {
	if f.i == len(f.c.packets) {
		return nil, nil
	}
	if ctx := f.pr.Opt.Context; ctx != nil && f.i&0xfff == 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	p := &f.c.packets[f.i]
	f.i++
	a := &f.a
	if p.fid == noFlow {
		*a = arrival{fid: noFlow}
	} else {
		*a = f.c.first[p.fid]
	}
	a.at = f.pr.injectTime(p.off)
	a.traceIndex, a.length, a.dscp, a.ecn = p.traceIndex, p.length, p.dscp, p.ecn
	if p.fid != noFlow && f.load != nil {
		f.load.add(a.at, a.src, a.dst, a.length)
	}
	a.data = p.control == notReplaced && (a.proto != 6 || p.payload > 0)
	if f.closed {
		a.payload = p.payload
		switch p.control {
		case replacedTCPAck:
			if f.tcp {
				a.replaced = p.control
			}
		case notReplaced:
		default:
			if f.roce {
				a.replaced = p.control
			}
		}
	}
	return a, nil
}

func (f *cacheFeed) Close() error { return nil }
