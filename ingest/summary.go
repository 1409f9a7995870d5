package ingest

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/units"
)

// Summary is the trace summary printed by `replay inspect` (--json prints it with
// encoding/json; the keys below are the contract of issues 2 and 16).
//
// Counting rules: packets = ipv4_packets + ipv6_packets + non_ip_packets +
// skipped["out-of-order"] + skipped["out-of-window"] + skipped["family-filtered"] +
// skipped["filtered"];
// non_ip_packets is the sum of the decoding reasons (arp, other-ethertype,
// unsupported-linktype, truncated-ipv4-header, bad-ipv4-header,
// truncated-ipv6-header, bad-ipv6-header). skipped["multicast"] counts the IP packets
// to a multicast or broadcast destination: they are among ipv4_packets and
// ipv6_packets (the summary describes the whole capture) and a replay does not inject
// them. Flows, endpoints, dscp, ecn, first_ts, last_ts and bytes cover the delivered
// IP packets of both families, multicast included; by_family splits packets, flows,
// dscp and ecn by family. ECN keys are always "0".."3"; DSCP keys are the code points
// seen; skipped lists every reason.
type Summary struct {
	Packets      int64            `json:"packets"`
	IPv4Packets  int64            `json:"ipv4_packets"`
	IPv6Packets  int64            `json:"ipv6_packets"`
	NonIPPackets int64            `json:"non_ip_packets"`
	Skipped      map[string]int64 `json:"skipped"`
	Flows        int64            `json:"flows"`     // distinct directional FiveTuples
	Endpoints    int64            `json:"endpoints"` // distinct IP addresses (source or destination)
	DSCP         map[string]int64 `json:"dscp"`
	ECN          map[string]int64 `json:"ecn"`
	ByFamily     ByFamily         `json:"by_family"`
	FirstTS      string           `json:"first_ts"` // RFC 3339 UTC, 9 fraction digits; "" without IP packets
	LastTS       string           `json:"last_ts"`
	DurationS    float64          `json:"duration_s"`    // last_ts - first_ts in seconds
	Bytes        int64            `json:"bytes"`         // sum of the packets' sizes L (IPv4 total length, 40 + IPv6 payload length)
	MeanRateBps  float64          `json:"mean_rate_bps"` // bytes*8/duration_s; 0 when the duration is 0
	Files        []FileSummary    `json:"files,omitempty"`
	// Window is the time window read (Options.Window), absent without one.
	Window *WindowSummary `json:"window,omitempty"`

	// First and Last are FirstTS and LastTS in ns since the epoch (valid when
	// IPPackets() > 0).
	First int64 `json:"-"`
	Last  int64 `json:"-"`
	// Unicast counts the IP packets that are not multicast or broadcast: those a
	// replay injects (IPPackets() - Skipped["multicast"]). FirstUnicast and
	// LastUnicast are the first and last one's timestamps (valid when Unicast > 0).
	Unicast                   int64 `json:"-"`
	FirstUnicast, LastUnicast int64 `json:"-"`
	// MaxUnicast is the latest unicast timestamp: LastUnicast, unless timestamps go
	// backwards (reordering off).
	MaxUnicast int64 `json:"-"`
	// UnicastFlows counts the flows of the unicast packets (Flows counts all).
	UnicastFlows int64 `json:"-"`
	// EndpointAddrs lists the distinct IP addresses of the unicast packets (their
	// sources and destinations), in no particular order: the endpoints a replay maps
	// onto hosts. Not in the JSON; Endpoints counts multicast groups as well.
	EndpointAddrs []ipaddr.Addr `json:"-"`
}

// ByFamily is a summary's by_family: the packets, flows and DSCP and ECN histograms
// of each address family.
type ByFamily struct {
	IPv4 FamilySummary `json:"ipv4"`
	IPv6 FamilySummary `json:"ipv6"`
}

// Of returns family f's summary.
func (b *ByFamily) Of(f ipaddr.Family) *FamilySummary {
	if f == ipaddr.IPv6 {
		return &b.IPv6
	}
	return &b.IPv4
}

// FamilySummary is one family's part of a summary (ByFamily).
type FamilySummary struct {
	Packets int64            `json:"packets"`
	Flows   int64            `json:"flows"` // distinct directional FiveTuples of the family
	DSCP    map[string]int64 `json:"dscp"`
	ECN     map[string]int64 `json:"ecn"`
}

// IPPackets is the number of IP packets of both families, IPv4Packets + IPv6Packets.
func (s *Summary) IPPackets() int64 { return s.IPv4Packets + s.IPv6Packets }

// WindowSummary is the time window a summary covers: [start_ts, end_ts) in RFC 3339
// UTC with 9 fraction digits; end_ts is "" for a window to the end of the capture.
type WindowSummary struct {
	StartTS string `json:"start_ts"`
	EndTS   string `json:"end_ts"`
}

// FileSummary is the Summary of one input file plus what the file declares.
type FileSummary struct {
	Path string `json:"path"`
	Summary
	Format       string   `json:"format"`        // "pcap" or "pcapng", "+gzip", "+bzip2", "+xz" or "+zstd" when compressed
	LinkTypes    []string `json:"linktypes"`     // e.g. ["ETHERNET(1)", "LINUX_SLL(113)"]
	TSResolution string   `json:"ts_resolution"` // "us", "ns", or a list like "ns,us" for mixed pcapng
	// InOrder is true when the file's IP packets are in timestamp order: the
	// reorder window had nothing to do (pass it on as Options.InOrder).
	InOrder bool `json:"in_order"`
}

// flowKey packs an IPv4 FiveTuple into 16 bytes without padding, so the map hashes
// it as plain memory.
type flowKey struct{ a, b uint64 }

func keyOf(p *Packet) flowKey {
	return flowKey{
		a: uint64(p.Src.Uint32())<<32 | uint64(p.Dst.Uint32()),
		b: uint64(p.SrcPort)<<32 | uint64(p.DstPort)<<16 | uint64(p.Proto),
	}
}

// flowSet is a set of flowKeys: open addressing with linear probing and a
// multiplicative hash, about 3x faster than a Go map on the per-packet path (one
// lookup per packet). The zero key is stored out of band.
type flowSet struct {
	slots   []flowKey
	n       int
	hasZero bool
}

func (s *flowSet) len() int {
	if s.hasZero {
		return s.n + 1
	}
	return s.n
}

// insert adds k and reports whether it was new.
func (s *flowSet) insert(k flowKey) bool {
	if k == (flowKey{}) {
		if s.hasZero {
			return false
		}
		s.hasZero = true
		return true
	}
	if 4*(s.n+1) > 3*len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	h := (k.a*0x9E3779B97F4A7C15 ^ k.b*0xC2B2AE3D27D4EB4F)
	i := (h ^ h>>29) & mask
	for {
		switch s.slots[i] {
		case k:
			return false
		case flowKey{}:
			s.slots[i] = k
			s.n++
			return true
		}
		i = (i + 1) & mask
	}
}

func (s *flowSet) grow() {
	old := s.slots
	size := 2 * len(old)
	if size == 0 {
		size = 1024
	}
	s.slots, s.n = make([]flowKey, size), 0
	for _, k := range old {
		if k != (flowKey{}) {
			s.insert(k)
		}
	}
}

// flowKey6 packs an IPv6 FiveTuple into 40 bytes: the two addresses in four words,
// ports and protocol in the fifth, which is never 0 (bit 63 set), so the zero key
// marks an empty slot.
type flowKey6 struct{ s0, s1, d0, d1, pp uint64 }

func keyOf6(p *Packet) flowKey6 {
	s0, s1 := p.Src.Words()
	d0, d1 := p.Dst.Words()
	return flowKey6{s0: s0, s1: s1, d0: d0, d1: d1, pp: 1<<63 | uint64(p.SrcPort)<<32 | uint64(p.DstPort)<<16 | uint64(p.Proto)}
}

// flowSet6 is flowSet for IPv6 keys (no zero key).
type flowSet6 struct {
	slots []flowKey6
	n     int
}

// insert adds k and reports whether it was new.
func (s *flowSet6) insert(k flowKey6) bool {
	if 4*(s.n+1) > 3*len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	h := (k.s0^k.d1)*0x9E3779B97F4A7C15 ^ (k.s1^k.d0)*0xC2B2AE3D27D4EB4F ^ k.pp*0x165667B19E3779F9
	i := (h ^ h>>29) & mask
	for {
		switch s.slots[i] {
		case k:
			return false
		case flowKey6{}:
			s.slots[i] = k
			s.n++
			return true
		}
		i = (i + 1) & mask
	}
}

func (s *flowSet6) grow() {
	old := s.slots
	size := 2 * len(old)
	if size == 0 {
		size = 256
	}
	s.slots, s.n = make([]flowKey6, size), 0
	for _, k := range old {
		if k != (flowKey6{}) {
			s.insert(k)
		}
	}
}

// acc accumulates one summary.
type acc struct {
	flows  flowSet  // IPv4
	flows6 flowSet6 // IPv6
	// endpoints maps each address to whether it is an endpoint of a unicast packet.
	endpoints map[ipaddr.Addr]bool
	dscp      [2][64]int64 // per family (ipaddr.Family.Index)
	ecn       [2][4]int64  // per family; its sum is the family's packets
	bytes     int64
	n         int64
	first     int64
	last      int64
	multicast int64
	uflows    int64 // flows of unicast packets
	ufirst    int64 // first and last unicast packet
	ulast     int64
	umax      int64 // latest unicast timestamp
}

func newAcc() *acc {
	return &acc{endpoints: make(map[ipaddr.Addr]bool)}
}

// add counts p and reports whether its flow is new to this accumulator.
func (a *acc) add(p *Packet) bool {
	a.count(p)
	var added bool
	if p.Src.Is6() {
		added = a.flows6.insert(keyOf6(p))
	} else {
		added = a.flows.insert(keyOf(p))
	}
	if !added {
		return false
	}
	if p.Multicast() {
		// A multicast flow's source may send nothing else: not an endpoint to map.
		if _, ok := a.endpoints[p.Src]; !ok {
			a.endpoints[p.Src] = false
		}
		if _, ok := a.endpoints[p.Dst]; !ok {
			a.endpoints[p.Dst] = false
		}
		return true
	}
	a.endpoints[p.Src] = true
	a.endpoints[p.Dst] = true
	a.uflows++
	return true
}

func (a *acc) fill(s *Summary, c *Counts) {
	s.Packets = c.Records
	s.IPv4Packets, s.IPv6Packets = c.IPv4, c.IPv6
	s.NonIPPackets = c.NonIP()
	s.Skipped = make(map[string]int64)
	for _, r := range SkipReasons() {
		s.Skipped[r.String()] = c.Skipped[r]
	}
	s.Skipped[SkipMulticast.String()] = a.multicast
	s.Flows = int64(a.flows.len() + a.flows6.n)
	s.Endpoints = int64(len(a.endpoints))
	s.EndpointAddrs = make([]ipaddr.Addr, 0, len(a.endpoints))
	for e, unicast := range a.endpoints {
		if unicast {
			s.EndpointAddrs = append(s.EndpointAddrs, e)
		}
	}
	s.Unicast, s.UnicastFlows = a.n-a.multicast, a.uflows
	s.FirstUnicast, s.LastUnicast, s.MaxUnicast = a.ufirst, a.ulast, a.umax
	var dscp [64]int64
	var ecn [4]int64
	for _, f := range ipaddr.Families {
		i := f.Index()
		fs := s.ByFamily.Of(f)
		fs.Packets = a.ecn[i][0] + a.ecn[i][1] + a.ecn[i][2] + a.ecn[i][3]
		fs.DSCP, fs.ECN = histograms(&a.dscp[i], &a.ecn[i])
		for d, n := range a.dscp[i] {
			dscp[d] += n
		}
		for e, n := range a.ecn[i] {
			ecn[e] += n
		}
	}
	s.ByFamily.IPv4.Flows, s.ByFamily.IPv6.Flows = int64(a.flows.len()), int64(a.flows6.n)
	s.DSCP, s.ECN = histograms(&dscp, &ecn)
	s.Bytes = a.bytes
	if a.n > 0 {
		s.First, s.Last = a.first, a.last
		s.FirstTS, s.LastTS = formatTS(a.first), formatTS(a.last)
		s.DurationS = float64(a.last-a.first) / 1e9
		if s.DurationS > 0 {
			s.MeanRateBps = float64(a.bytes) * 8 / s.DurationS
		}
	}
}

// histograms returns the JSON maps of a DSCP and an ECN histogram: DSCP values seen,
// and every ECN codepoint.
func histograms(dscp *[64]int64, ecn *[4]int64) (d, e map[string]int64) {
	d, e = make(map[string]int64), make(map[string]int64)
	for v, n := range dscp {
		if n > 0 {
			d[strconv.Itoa(v)] = n
		}
	}
	for v, n := range ecn {
		e[strconv.Itoa(v)] = n
	}
	return d, e
}

// Summarize streams the files through a Reader with opt and returns the summary of
// all of them together, with one FileSummary per file in Files.
//
// It first reads the files without their reorder buffers, noting whether each file
// is in timestamp order; when all are (the usual capture), that pass's summary is
// the one the window would give, and it is returned. Otherwise (the first packet
// earlier than the one before it in its file ends that pass) the files are read
// again with the window. Warnings come from the pass whose summary is returned.
func Summarize(paths []string, opt Options) (*Summary, error) { return SummarizeVisit(paths, opt, nil) }

// A Visitor sees the packets of a summary's pass (SummarizeVisit): what a caller
// needs of every packet besides the summary, without reading the files again.
type Visitor interface {
	// Visit is called with every IP packet the Reader delivers, in its order
	// (multicast included). p is valid during the call only. An error stops the pass
	// and is returned.
	Visit(p *Packet) error
	// Restart discards everything visited so far: the files are read again from
	// their start (with the reorder window, a file having been out of order).
	Restart()
}

// SummarizeVisit is Summarize, calling v (when not nil) with every packet of the
// pass whose summary it returns: once per packet of an in-order capture; for a
// capture out of timestamp order, the packets of the first pass up to the first
// one out of order, then v.Restart, then every packet of the windowed pass.
func SummarizeVisit(paths []string, opt Options, v Visitor) (*Summary, error) {
	if opt.ReorderWindow < 0 {
		s, _, err := summarize(paths, opt, v, false)
		return s, err
	}
	var warns []string
	fast := opt
	fast.ReorderWindow = -1
	fast.Warn = func(m string) { warns = append(warns, m) }
	s, inOrder, err := summarize(paths, fast, v, true)
	if err == nil && !inOrder {
		if v != nil {
			v.Restart()
		}
		s, _, err = summarize(paths, opt, v, false)
		return s, err
	}
	if opt.Warn != nil {
		for _, m := range warns {
			opt.Warn(m)
		}
	}
	return s, err
}

// summarize is one pass of Summarize; inOrder reports whether every file was in
// timestamp order. With stopOutOfOrder the pass ends (inOrder false, no summary)
// at the first packet earlier than the one before it in its file.
func summarize(paths []string, opt Options, v Visitor, stopOutOfOrder bool) (_ *Summary, inOrder bool, _ error) {
	r, err := Open(paths, opt)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	files := make([]*acc, len(paths))
	for i := range files {
		files[i] = newAcc()
	}
	total := files[0]
	if len(paths) > 1 {
		total = newAcc()
	}
	var p Packet
	for i := 0; ; i++ {
		if i&0xffff == 0 && opt.Context != nil {
			if err := opt.Context.Err(); err != nil {
				return nil, false, err
			}
		}
		ok, err := r.Next(&p)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			break
		}
		if stopOutOfOrder && !r.srcs[p.FileIndex].stats.InOrder {
			return nil, false, nil
		}
		newFlow := files[p.FileIndex].add(&p)
		if total != files[0] {
			// A flow already known to its file is known to the total.
			if newFlow {
				total.add(&p)
			} else {
				total.count(&p)
			}
		}
		if v != nil {
			if err := v.Visit(&p); err != nil {
				return nil, false, err
			}
		}
	}
	s := &Summary{}
	tc := r.Total()
	total.fill(s, &tc)
	if lo, hi, ok := r.WindowBounds(); ok && !opt.Window.IsZero() {
		s.Window = &WindowSummary{StartTS: FormatTime(lo)}
		if opt.Window.Duration > 0 {
			s.Window.EndTS = FormatTime(hi)
		}
	}
	inOrder = true
	for i, fs := range r.Files() {
		f := FileSummary{Path: fs.Path, Format: fs.Format, TSResolution: strings.Join(fs.Resolutions, ","), InOrder: fs.InOrder}
		inOrder = inOrder && fs.InOrder
		if fs.Compression != "" {
			f.Format += "+" + fs.Compression
		}
		f.LinkTypes = make([]string, len(fs.LinkTypes))
		for j, l := range fs.LinkTypes {
			f.LinkTypes[j] = l.String()
		}
		files[i].fill(&f.Summary, &fs.Counts)
		s.Files = append(s.Files, f)
	}
	return s, inOrder, nil
}

// InOrderFiles returns FileSummary.InOrder per file, ready for Options.InOrder.
func (s *Summary) InOrderFiles() []bool {
	out := make([]bool, len(s.Files))
	for i := range s.Files {
		out[i] = s.Files[i].InOrder
	}
	return out
}

// count adds p to a total whose flow set already holds p's flow.
func (a *acc) count(p *Packet) {
	if a.n == 0 {
		a.first = p.Timestamp
	}
	if p.Multicast() {
		a.multicast++
	} else {
		if a.n == a.multicast {
			a.ufirst, a.umax = p.Timestamp, p.Timestamp
		}
		a.ulast, a.umax = p.Timestamp, max(a.umax, p.Timestamp)
	}
	a.n++
	a.last = p.Timestamp
	f := p.Src.Family().Index() & 1
	a.dscp[f][p.DSCP&63]++
	a.ecn[f][p.ECN&3]++
	a.bytes += int64(p.TotalLen)
}

var ecnNames = [4]string{"Not-ECT", "ECT(1)", "ECT(0)", "CE"}

// WriteText writes the summary as a human-readable table. Histograms and reasons
// print in a fixed order (DSCP and ECN ascending, skip reasons in SkipReasons order).
func (s *Summary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	s.writeRows(tw, "")
	for _, f := range s.Files {
		if len(s.Files) == 1 {
			fmt.Fprintf(tw, "file\t%s\n", f.Path)
		} else {
			fmt.Fprintf(tw, "\nfile\t%s\n", f.Path)
		}
		fmt.Fprintf(tw, "  format\t%s\n", f.Format)
		fmt.Fprintf(tw, "  link types\t%s\n", strings.Join(f.LinkTypes, ", "))
		fmt.Fprintf(tw, "  timestamps\t%s\n", f.TSResolution)
		fmt.Fprintf(tw, "  in time order\t%s\n", yesNo(f.InOrder))
		if len(s.Files) > 1 {
			f.Summary.writeRows(tw, "  ")
		}
	}
	return tw.Flush()
}

func (s *Summary) writeRows(w io.Writer, ind string) {
	fmt.Fprintf(w, "%spackets\t%d\n", ind, s.Packets)
	fmt.Fprintf(w, "%sIPv4 packets\t%d (%s)\n", ind, s.IPv4Packets, plural(s.ByFamily.IPv4.Flows, "flow"))
	fmt.Fprintf(w, "%sIPv6 packets\t%d (%s)\n", ind, s.IPv6Packets, plural(s.ByFamily.IPv6.Flows, "flow"))
	fmt.Fprintf(w, "%snon-IP packets\t%d\n", ind, s.NonIPPackets)
	var sk []string
	for _, r := range SkipReasons() {
		if n := s.Skipped[r.String()]; n > 0 {
			note := ""
			if r == SkipMulticast {
				note = " (IP, not replayed)"
			}
			sk = append(sk, fmt.Sprintf("%s %d%s", r, n, note))
		}
	}
	if len(sk) == 0 {
		sk = []string{"none"}
	}
	fmt.Fprintf(w, "%sskipped\t%s\n", ind, strings.Join(sk, ", "))
	fmt.Fprintf(w, "%sflows\t%d\n", ind, s.Flows)
	fmt.Fprintf(w, "%sendpoints\t%d\n", ind, s.Endpoints)
	var ds []string
	for d := 0; d < 64; d++ {
		if n := s.DSCP[strconv.Itoa(d)]; n > 0 {
			ds = append(ds, fmt.Sprintf("%d: %d (%s)", d, n, pct(n, s.IPPackets())))
		}
	}
	fmt.Fprintf(w, "%sDSCP\t%s\n", ind, strings.Join(ds, ", "))
	var es []string
	for e := 0; e < 4; e++ {
		if n := s.ECN[strconv.Itoa(e)]; n > 0 {
			es = append(es, fmt.Sprintf("%s %d (%s)", ecnNames[e], n, pct(n, s.IPPackets())))
		}
	}
	fmt.Fprintf(w, "%sECN\t%s\n", ind, strings.Join(es, ", "))
	if s.Window != nil {
		fmt.Fprintf(w, "%swindow\t%s .. %s\n", ind, s.Window.StartTS, dash(s.Window.EndTS))
	}
	fmt.Fprintf(w, "%sfirst\t%s\n", ind, dash(s.FirstTS))
	fmt.Fprintf(w, "%slast\t%s\n", ind, dash(s.LastTS))
	fmt.Fprintf(w, "%sduration\t%s\n", ind, s.duration())
	fmt.Fprintf(w, "%sbytes\t%d\n", ind, s.Bytes)
	r := rate(s.MeanRateBps)
	if s.Last <= s.First {
		r = "-"
	}
	fmt.Fprintf(w, "%smean rate\t%s\n", ind, r)
}

// duration is the capture's span for people: "2.995 s", "4.51 years", and a span
// whose last packet is earlier than its first (timestamps going backwards across
// files or interfaces, with reordering off) said as such.
func (s *Summary) duration() string {
	if s.IPPackets() == 0 {
		return "-"
	}
	d := units.HumanNanos(s.Last - s.First)
	if s.Last < s.First {
		d += " (negative: the last packet is earlier than the first; timestamps go backwards)"
	}
	return d
}

// FormatTime formats nanoseconds since the epoch as RFC 3339 UTC with 9 fraction
// digits, as the summary's first_ts and last_ts.
func FormatTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
}

func pct(n, of int64) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func rate(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.3f Gbit/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.3f Mbit/s", bps/1e6)
	case bps >= 1e3:
		return fmt.Sprintf("%.3f kbit/s", bps/1e3)
	}
	return fmt.Sprintf("%.0f bit/s", bps)
}

// plural writes a count with its noun: "1 flow", "2 flows".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
