package analysis

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// Closed loop (docs/analysis.md#closed-loop): what the simulated senders and
// receivers of a closed-loop run did, from transport.arrow (every congestion-control
// event), flows.arrow (congestion signals per flow) and run.json (control packets,
// replaced captured packets, retransmissions and timeouts). Open-loop runs have no
// transport.arrow and no closed-loop summary.

// TransportEvents counts transport.arrow's events as they stream past: per kind,
// rate cuts per flow, and per kind over time (rows in any time order: DCQCN rate
// changes are written when the sender's lazily evaluated timers catch up, after rows
// of later times; a flow's own rate rows are in its time order). A rate_cut counts
// only when it lowers the flow's rate, a rate_increase only when it raises it: runs
// written before tracefabric stopped writing them also hold rate_cut rows of senders
// already at MinRate, "cut" to the same MinRate, which are not reductions. Memory:
// O(kinds x FineBins + DCQCN flows with a rate change).
type TransportEvents struct {
	simPs    int64
	bins     int
	events   [records.NumTransportEventKinds]int64
	rateCuts map[int64]int64 // flow id -> rate cuts
	rate     map[int64]int64 // flow id -> its rate after its last rate row, bit/s
	fine     *fineSeries     // one row per kind
	notify   *fineSeries     // CNPs and rate cuts alone, binned over their own span
}

// NewTransportEvents counts the events of a simulation of simPs ps, to be binned in at
// most bins bins over their span.
func NewTransportEvents(simPs int64, bins int) *TransportEvents {
	return &TransportEvents{simPs: simPs, bins: max(bins, 1), rateCuts: map[int64]int64{}, rate: map[int64]int64{},
		fine: newFineSeries(int(records.NumTransportEventKinds), false), notify: newFineSeries(2, false)}
}

// Add counts one event of kind k at timePs (ps) of flow flowID, whose value is the
// row's value column (a rate change's new rate, bit/s).
func (t *TransportEvents) Add(timePs, flowID int64, k records.TransportEventKind, value int64) error {
	if k >= records.NumTransportEventKinds {
		return fmt.Errorf("transport event kind %d unknown", k)
	}
	if k == records.EventRateCut || k == records.EventRateIncrease {
		prev, seen := t.rate[flowID]
		t.rate[flowID] = value
		if seen && (k == records.EventRateCut && value >= prev || k == records.EventRateIncrease && value <= prev) {
			return nil // the rate did not move that way: not a cut (increase)
		}
	}
	t.events[k]++
	switch k {
	case records.EventRateCut:
		t.rateCuts[flowID]++
		t.notify.rows[1][t.notify.index(timePs)]++
	case records.EventCNP:
		t.notify.rows[0][t.notify.index(timePs)]++
	}
	t.fine.rows[k][t.fine.index(timePs)]++
	return nil
}

// EventSeries is transport events over time: Counts[k][b] events of Kinds[k] in bin b,
// which covers [StartPs + b*BinPs, StartPs + (b+1)*BinPs) ps, over the span of all the
// events (padded, see FineBins); the whole run without events. Every kind is listed,
// in the enumeration's order.
type EventSeries struct {
	StartPs units.Time `json:"start_ps"`
	BinPs   units.Time `json:"bin_ps"`
	Kinds   []string   `json:"kinds"`
	Counts  [][]int64  `json:"counts"`
}

// MarshalJSON writes the times in ps.
func (s EventSeries) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		StartPs int64     `json:"start_ps"`
		BinPs   int64     `json:"bin_ps"`
		Kinds   []string  `json:"kinds"`
		Counts  [][]int64 `json:"counts"`
	}{ps(s.StartPs), ps(s.BinPs), s.Kinds, s.Counts})
}

// Series bins the events counted so far.
func (t *TransportEvents) Series() *EventSeries {
	w := t.fine.ownWindow(t.simPs, t.bins)
	s := &EventSeries{StartPs: units.Time(w.start), BinPs: units.Time(w.width)}
	for k := range records.TransportEventKind(records.NumTransportEventKinds) {
		s.Kinds = append(s.Kinds, k.String())
		s.Counts = append(s.Counts, t.fine.collect(int(k), w))
	}
	return s
}

// Notifications bins the CNPs and rate cuts alone (Kinds "cnp", "rate_cut") over their
// own span, which window cuts or rate increases may outlast.
func (t *TransportEvents) Notifications() *EventSeries {
	w := t.notify.ownWindow(t.simPs, t.bins)
	return &EventSeries{StartPs: units.Time(w.start), BinPs: units.Time(w.width),
		Kinds: []string{records.EventCNP.String(), records.EventRateCut.String()}, Counts: [][]int64{t.notify.collect(0, w), t.notify.collect(1, w)}}
}

// PerFlow is the distribution over a set of flows of a per-flow count: Flows in the
// set, WithAny of them with a count above 0, the Mean over all Flows (null without
// flows) and the Max.
type PerFlow struct {
	Flows   int64   `json:"flows"`
	WithAny int64   `json:"with_any"`
	Total   int64   `json:"total"`
	Mean    float64 `json:"mean"`
	Max     int64   `json:"max"`
}

// MarshalJSON writes an undefined mean as null.
func (p PerFlow) MarshalJSON() ([]byte, error) {
	type plain PerFlow
	return marshalNullNaN(plain(p))
}

// add counts one flow's value.
func (p *PerFlow) add(v int64) {
	p.Flows++
	p.Total += v
	p.Max = max(p.Max, v)
	if v > 0 {
		p.WithAny++
	}
}

func (p *PerFlow) finish() {
	p.Mean = math.NaN()
	if p.Flows > 0 {
		p.Mean = float64(p.Total) / float64(p.Flows)
	}
}

// TransportSummary is the closed-loop part of a Summary (nil for an open-loop run).
//
// Events counts transport.arrow's events by kind (every kind listed); OverTime bins
// them, CNPOverTime bins the CNPs and rate cuts alone over their own span (figure
// cnp_over_time). FlowsByTransport counts flows.arrow's flows by sender. CNPsPerFlow is, over
// the DCQCN flows, the distribution of the CNPs each sender received (flows.arrow
// congestion_signals), RateCutsPerFlow that of their rate cuts (transport.arrow);
// ECEPerFlow is, over the TCP flows (DCTCP, NewReno), that of the ECE-marked ACKs each
// sender received. ControlPackets are run.json's control packets by kind (generated,
// delivered, dropped, undrained), Replaced the captured packets the simulated
// receivers' own replaced (run.json trace.replaced), Retransmits and Timeouts
// run.json's sums of flows.arrow's columns.
type TransportSummary struct {
	Events           map[string]int64                `json:"events"`
	FlowsByTransport map[string]int64                `json:"flows_by_transport"`
	CNPsPerFlow      PerFlow                         `json:"cnps_per_flow"`
	RateCutsPerFlow  PerFlow                         `json:"rate_cuts_per_flow"`
	ECEPerFlow       PerFlow                         `json:"ece_acks_per_flow"`
	ControlPackets   map[string]records.ControlCount `json:"control_packets"`
	Replaced         map[string]int64                `json:"replaced"`
	Retransmits      int64                           `json:"retransmits"`
	Timeouts         int64                           `json:"timeouts"`
	OverTime         *EventSeries                    `json:"over_time"`
	CNPOverTime      *EventSeries                    `json:"cnp_over_time"`
}

// ClosedLoop is what Load keeps of a closed-loop run's transport records: the events
// counted (transport.arrow, read before flows.arrow), run.json's counts, and the
// per-flow distributions accumulated while flows.arrow streams (AddFlow).
type ClosedLoop struct {
	Events         *TransportEvents
	ControlPackets map[string]records.ControlCount
	Replaced       map[string]int64
	Retransmits    int64
	Timeouts       int64

	flowsBy                [records.NumTransports]int64
	cnps, rateCuts, eceAck PerFlow
}

// AddFlow counts one flows.arrow row: its sender and the congestion signals it
// received (CNPs for DCQCN, ECE-marked ACKs for TCP).
func (c *ClosedLoop) AddFlow(flowID int64, t records.Transport, signals int64) {
	if t < records.NumTransports {
		c.flowsBy[t]++
	}
	switch t {
	case records.TransportDCQCN:
		c.cnps.add(signals)
		c.rateCuts.add(c.Events.rateCuts[flowID])
	case records.TransportDCTCP, records.TransportNewReno:
		c.eceAck.add(signals)
	}
}

// Summary summarises a closed-loop run's transport records (nil for nil: open loop).
func (c *ClosedLoop) Summary() *TransportSummary {
	if c == nil {
		return nil
	}
	if c.Events == nil {
		c.Events = NewTransportEvents(0, TimeBins)
	}
	s := &TransportSummary{Events: map[string]int64{}, FlowsByTransport: map[string]int64{},
		ControlPackets: map[string]records.ControlCount{}, Replaced: map[string]int64{},
		Retransmits: c.Retransmits, Timeouts: c.Timeouts,
		CNPsPerFlow: c.cnps, RateCutsPerFlow: c.rateCuts, ECEPerFlow: c.eceAck}
	for k := range records.TransportEventKind(records.NumTransportEventKinds) {
		s.Events[k.String()] = c.Events.events[k]
	}
	for t := range records.Transport(records.NumTransports) {
		if c.flowsBy[t] > 0 {
			s.FlowsByTransport[t.String()] = c.flowsBy[t]
		}
	}
	for _, p := range []*PerFlow{&s.CNPsPerFlow, &s.RateCutsPerFlow, &s.ECEPerFlow} {
		p.finish()
	}
	for k, v := range c.ControlPackets {
		s.ControlPackets[k] = v
	}
	for k, v := range c.Replaced {
		s.Replaced[k] = v
	}
	s.OverTime = c.Events.Series()
	s.CNPOverTime = c.Events.Notifications()
	return s
}
