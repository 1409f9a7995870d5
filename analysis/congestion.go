package analysis

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// Congestion says whether anything in a run congested, by its congestion signals:
// packets dropped (data or closed-loop control), PFC pause intervals and CE marks at
// egress queues; Congested is false when every signal is 0. HostLoad is how loaded
// the busiest host link was (the rule in HostLoad's doc).
type Congestion struct {
	Congested bool             `json:"congested"`
	Signals   map[string]int64 `json:"signals"` // drops, control_drops, pfc_pause_intervals, ecn_marks
	HostLoad  *HostLoad        `json:"busiest_host_link"`
}

// HostLoad is the load of the busiest host link (either direction), from run.json's
// offered_load when the run has one (Source "run.json offered_load": the busiest
// BinPs bin's share PeakShare and the 99th percentile's P99Share of the link's
// speed), else from ports.arrow (Source "ports.arrow": the link that carried most
// frame bytes, MeanShare = its bytes x 8 / (simulated time x HostLink.Speed), a mean
// over the run that says nothing of its peaks). Shares are NaN when unknown.
type HostLoad struct {
	Source    string  `json:"source"`
	Link      string  `json:"link"`
	BinPs     int64   `json:"bin_ps,omitempty"`
	PeakShare float64 `json:"peak_share"`
	P99Share  float64 `json:"p99_share"`
	MeanShare float64 `json:"mean_share"`
	SpeedBps  float64 `json:"speed_bps"`
}

// MarshalJSON writes unknown shares as null.
func (h HostLoad) MarshalJSON() ([]byte, error) {
	type plain HostLoad
	return marshalNullNaN(plain(h))
}

// Sources of HostLoad.
const (
	LoadFromRunJSON = "run.json offered_load"
	LoadFromPorts   = "ports.arrow"
)

// congestion summarises s's congestion signals and the run's busiest host link.
func congestion(run *Run, s *Summary) Congestion {
	var control int64
	for k, n := range s.Drops.Control {
		if k != records.KindData {
			control += n
		}
	}
	c := Congestion{Signals: map[string]int64{
		"drops": s.Drops.Total, "control_drops": control, "pfc_pause_intervals": int64(s.PFC.PauseIntervals), "ecn_marks": s.ECN.Marked,
	}}
	for _, n := range c.Signals {
		c.Congested = c.Congested || n > 0
	}
	c.HostLoad = hostLoad(run)
	return c
}

// hostLoad is the busiest host link's load (HostLoad).
func hostLoad(run *Run) *HostLoad {
	var cfg struct {
		Topology struct {
			HostLink struct{ Speed units.BitRate }
		}
	}
	speed := math.NaN()
	if json.Unmarshal(run.Info.Config, &cfg) == nil && cfg.Topology.HostLink.Speed > 0 {
		speed = float64(cfg.Topology.HostLink.Speed)
	}
	if o := run.Info.OfferedLoad; o != nil {
		h := &HostLoad{Source: LoadFromRunJSON, Link: o.BusiestLink, BinPs: o.BinPs, PeakShare: o.PeakShare, P99Share: o.P99Share, MeanShare: math.NaN(), SpeedBps: speed}
		if math.IsNaN(speed) && o.P99Share > 0 {
			h.SpeedBps = math.Round(o.P99Bps / o.P99Share)
		}
		return h
	}
	tier := map[NodeID]records.Tier{}
	for _, q := range run.Queues {
		tier[q.Node] = q.Tier
	}
	type link struct {
		node NodeID
		port int32
	}
	bytes := map[link]int64{}
	peer := map[link]NodeID{}
	for _, q := range run.Queues {
		if q.Tier == records.TierHost || tier[q.Peer] == records.TierHost {
			l := link{q.Node, q.Port}
			bytes[l] += q.TxBytes
			peer[l] = q.Peer
		}
	}
	var best link
	found := false
	for l, b := range bytes {
		if !found || b > bytes[best] || b == bytes[best] && (l.node < best.node || l.node == best.node && l.port < best.port) {
			best, found = l, true
		}
	}
	if !found {
		return nil
	}
	h := &HostLoad{Source: LoadFromPorts, Link: run.Nodes.Name(best.node) + " to " + run.Nodes.Name(peer[best]),
		PeakShare: math.NaN(), P99Share: math.NaN(), MeanShare: math.NaN(), SpeedBps: speed}
	if run.Info.SimPs > 0 && speed > 0 {
		h.MeanShare = float64(bytes[best]) * 8 / (float64(run.Info.SimPs) * 1e-12) / speed
	}
	return h
}

// quietLine is the headline's one line for a run where nothing congested: which
// signals were 0 and how loaded the busiest host link was.
func quietLine(c Congestion, simPs int64) string {
	return "Nothing congested: no drop, PFC pause or ECN mark" + loadWords(c.HostLoad, simPs) + "."
}

// loadWords says how loaded the busiest host link was: "; the busiest host link,
// A to B, peaked at 12% of its 100 Gbps in 1 ms bins (p99 9.5%; run.json
// offered_load)", or its mean over the simulated time from ports.arrow.
func loadWords(h *HostLoad, simPs int64) string {
	if h == nil {
		return "; the ports hold no host link's load"
	}
	speed := ""
	if h.SpeedBps > 0 {
		speed = " " + units.BitRate(h.SpeedBps).String()
	}
	switch {
	case h.Source == LoadFromRunJSON && h.Link == "": // offered_load of a run in which no packet reached a host link
		return "; no packet crossed a host link (" + h.Source + ")"
	case h.Source == LoadFromRunJSON:
		return fmt.Sprintf("; the busiest host link, %s, peaked at %s of its%s in %s bins (p99 %s; %s)", h.Link, units.FormatFraction(h.PeakShare), speed,
			units.FormatPs(float64(h.BinPs)), units.FormatFraction(h.P99Share), h.Source)
	}
	if math.IsNaN(h.MeanShare) {
		return fmt.Sprintf("; the busiest host link is %s (%s; run.json gives neither its speed nor offered_load)", h.Link, h.Source)
	}
	return fmt.Sprintf("; the busiest host link, %s, carried %s of its%s on average over the %s simulated (%s; this run.json has no offered_load, the peak in 1 ms bins)",
		h.Link, units.FormatFraction(h.MeanShare), speed, units.FormatPs(float64(simPs)), h.Source)
}
