package analysis

import (
	"errors"
	"fmt"
	"sort"

	"github.com/tracefabric/tracefabric/records"
)

// PFCEvent is one row of pfc.arrow: at TimePs (ps) Node's Port, whose link leads to
// Peer, saw Kind for traffic class TC with Quanta (pause quanta, 0 for a resume).
type PFCEvent struct {
	TimePs int64
	Node   NodeID
	Port   int32
	Peer   NodeID
	TC     uint8
	Kind   records.PFCEventKind
	Quanta uint16
}

// PortClass identifies one egress queue: a (node, port, traffic class). Nodes.Port
// names it.
type PortClass struct {
	Node NodeID
	Port int32
	TC   uint8
}

// How a pause interval ended.
const (
	EndResume = "resume" // an rx_resume (or a zero-quanta rx_pause)
	EndExpire = "expire" // the last pause's quanta ran out
	EndSim    = "end"    // still paused when the simulation ended
)

// PauseInterval is one time span during which Node's Port could not send class TC
// because Peer (the node at the other end of the link) paused it. PeerPort is Peer's
// port on that link when known (from tx_pause/tx_resume events or the ports records),
// else -1. Times are ps, half open [StartPs, EndPs). Refreshes counts the pause frames
// that extended the interval after the first.
type PauseInterval struct {
	PortClass
	Peer      NodeID
	PeerPort  int32
	StartPs   int64
	EndPs     int64
	Refreshes int
	EndedBy   string
}

// DurationPs is EndPs - StartPs.
func (p PauseInterval) DurationPs() int64 { return p.EndPs - p.StartPs }

// PauseBuilder turns a time-ordered stream of PFC events into pause intervals, per
// paused (node, port, tc):
//
//   - rx_pause with quanta > 0 opens an interval, or extends the open one (a refresh);
//   - rx_resume, or rx_pause with quanta 0, closes the open interval at its time;
//   - expire closes the open interval at its time (the expiry time);
//   - a resume or expire with no open interval is ignored (counted in Ignored);
//   - Finish closes intervals still open at the simulation end.
//
// tx_pause and tx_resume are the same frames seen from the sender; they only teach the
// builder which port of the sender faces the paused node (PeerPort). The zero value is
// ready to use. Memory is O(paused port-classes + intervals).
type PauseBuilder struct {
	Intervals []PauseInterval
	// Ignored counts resume and expire events that found no open interval.
	Ignored int
	// Events counts the events added.
	Events int

	open   map[PortClass]int
	txPort map[[2]NodeID]int32
	lastPs int64
}

// ErrPFCOrder is returned when PFC events are not in time order.
var ErrPFCOrder = errors.New("analysis: pfc events out of time order")

// Add adds the next event. Events must come in non-decreasing time.
func (b *PauseBuilder) Add(e PFCEvent) error {
	if b.open == nil {
		b.open = map[PortClass]int{}
		b.txPort = map[[2]NodeID]int32{}
	}
	if b.Events > 0 && e.TimePs < b.lastPs {
		return fmt.Errorf("%w: event %d at %d ps after one at %d ps", ErrPFCOrder, b.Events, e.TimePs, b.lastPs)
	}
	b.lastPs = e.TimePs
	b.Events++
	key := PortClass{e.Node, e.Port, e.TC}
	switch e.Kind {
	case records.EventTxPause, records.EventTxResume:
		b.txPort[[2]NodeID{e.Node, e.Peer}] = e.Port
	case records.EventRxPause:
		if e.Quanta == 0 {
			b.close(key, e.TimePs, EndResume)
			return nil
		}
		if i, ok := b.open[key]; ok {
			b.Intervals[i].Refreshes++
			return nil
		}
		b.open[key] = len(b.Intervals)
		b.Intervals = append(b.Intervals, PauseInterval{PortClass: key, Peer: e.Peer, PeerPort: -1, StartPs: e.TimePs, EndPs: -1})
	case records.EventRxResume:
		b.close(key, e.TimePs, EndResume)
	case records.EventExpire:
		b.close(key, e.TimePs, EndExpire)
	default:
		return fmt.Errorf("%w: unknown PFC event kind %d at event %d", ErrRecordsMismatch, e.Kind, b.Events-1)
	}
	return nil
}

func (b *PauseBuilder) close(key PortClass, t int64, by string) {
	i, ok := b.open[key]
	if !ok {
		b.Ignored++
		return
	}
	delete(b.open, key)
	b.Intervals[i].EndPs = t
	b.Intervals[i].EndedBy = by
}

// Finish closes the intervals still open at endPs (the simulation end, ps), fills
// PeerPort where a tx event named it, and returns the intervals ordered by start time
// (ties in the order they opened).
func (b *PauseBuilder) Finish(endPs int64) []PauseInterval {
	for key, i := range b.open {
		iv := &b.Intervals[i]
		iv.EndPs = max(endPs, iv.StartPs)
		iv.EndedBy = EndSim
		delete(b.open, key)
	}
	for i := range b.Intervals {
		iv := &b.Intervals[i]
		if iv.PeerPort < 0 {
			if p, ok := b.txPort[[2]NodeID{iv.Peer, iv.Node}]; ok {
				iv.PeerPort = p
			}
		}
	}
	return b.Intervals
}

// PauseIntervals builds the pause intervals of time-ordered events (see PauseBuilder)
// for a simulation that ended at endPs.
func PauseIntervals(events []PFCEvent, endPs int64) ([]PauseInterval, error) {
	var b PauseBuilder
	for _, e := range events {
		if err := b.Add(e); err != nil {
			return nil, err
		}
	}
	return b.Finish(endPs), nil
}

// PausedPort is the pause record of one paused port-class: how many intervals, their
// total and longest duration (ps), and the paused fraction of the simulated time.
// Class is the port-class; PortName and Peer name it and the pausing node.
type PausedPort struct {
	Class PortClass `json:"-"`
	PortName
	Peer      string  `json:"peer"`
	Intervals int     `json:"intervals"`
	TotalPs   int64   `json:"total_ps"`
	LongestPs int64   `json:"longest_ps"`
	Fraction  float64 `json:"fraction"`
	FirstPs   int64   `json:"first_ps"`
	LastEndPs int64   `json:"last_end_ps"`
}

// PauseStats groups intervals by paused port-class, for a simulated time of simPs
// (the fraction's denominator; 0 leaves Fraction 0), naming nodes by nodes. Ordered by
// total paused time, longest first, then by port-class name.
func PauseStats(intervals []PauseInterval, simPs int64, nodes Nodes) []PausedPort {
	idx := map[PortClass]int{}
	var out []PausedPort
	for _, iv := range intervals {
		i, ok := idx[iv.PortClass]
		if !ok {
			i = len(out)
			idx[iv.PortClass] = i
			out = append(out, PausedPort{Class: iv.PortClass, PortName: nodes.Port(iv.PortClass), Peer: nodes.Name(iv.Peer), FirstPs: iv.StartPs})
		}
		p := &out[i]
		d := iv.DurationPs()
		p.Intervals++
		p.TotalPs += d
		p.LongestPs = max(p.LongestPs, d)
		p.FirstPs = min(p.FirstPs, iv.StartPs)
		p.LastEndPs = max(p.LastEndPs, iv.EndPs)
	}
	for i := range out {
		if simPs > 0 {
			out[i].Fraction = float64(out[i].TotalPs) / float64(simPs)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TotalPs != out[j].TotalPs {
			return out[i].TotalPs > out[j].TotalPs
		}
		return portNameLess(out[i].PortName, out[j].PortName)
	})
	return out
}

func portNameLess(a, b PortName) bool {
	if a.Node != b.Node {
		return a.Node < b.Node
	}
	if a.Port != b.Port {
		return a.Port < b.Port
	}
	return a.TC < b.TC
}
