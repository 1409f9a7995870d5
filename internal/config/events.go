package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Routing is how the fabric's routing reacts to events
// (docs/model.md#failures-and-operations).
type Routing struct {
	// LocalRepairDelay is how long after a link or switch event the switches at its
	// ends update their equal-cost sets (default 0: at once, as a switch detecting
	// loss of signal prunes the member in hardware). 0..1 s.
	LocalRepairDelay units.Time `yaml:"LocalRepairDelay"`
	// ReconvergenceDelay is how long after an event every other switch installs the
	// new routes (default 50 ms: a BGP fabric with BFD, RFC 7938, whose BFD detection
	// of 3 x 10-50 ms plus update propagation and FIB programming is tens of ms). A
	// drain applies at every switch after it. 0..100 s, at least LocalRepairDelay.
	ReconvergenceDelay units.Time `yaml:"ReconvergenceDelay"`
}

// DefaultRouting returns LocalRepairDelay 0 and ReconvergenceDelay 50 ms.
func DefaultRouting() Routing {
	return Routing{LocalRepairDelay: 0, ReconvergenceDelay: 50 * units.Millisecond}
}

// EventKind is what an event does (docs/model.md#failures-and-operations).
type EventKind string

// Event kinds.
const (
	LinkDown   EventKind = "link-down"   // Link goes down
	LinkUp     EventKind = "link-up"     // Link comes back
	SwitchDown EventKind = "switch-down" // Node (a switch) fails: every link of it goes down, its buffer is lost
	SwitchUp   EventKind = "switch-up"   // Node comes back
	Drain      EventKind = "drain"       // routing withdraws Node from every equal-cost set after ReconvergenceDelay
	Undrain    EventKind = "undrain"     // Node is used again
	Flap       EventKind = "flap"        // Link goes down at At + k x Period and up Down later, Count times
	Speed      EventKind = "speed"       // Link runs at Speed from At
	Stall      EventKind = "stall"       // Node (a host) stops draining: it pauses its rack port, a PFC storm
	Unstall    EventKind = "unstall"     // Node drains again (one resume)
)

// EventKinds lists the kinds in documentation order.
var EventKinds = []EventKind{LinkDown, LinkUp, SwitchDown, SwitchUp, Drain, Undrain, Flap, Speed, Stall, Unstall}

// OnLink reports whether the kind names a Link (else a Node).
func (k EventKind) OnLink() bool { return k == LinkDown || k == LinkUp || k == Flap || k == Speed }

// Event is one entry of Events: something that happens to the fabric at a time of
// the trace.
type Event struct {
	// At is the time after the first replayed packet, in capture time (divided by
	// --speedup like the packets), >= 0.
	At units.Time `yaml:"At"`
	// Kind is link-down, link-up, switch-down, switch-up, drain, undrain, flap,
	// speed, stall or unstall.
	Kind EventKind `yaml:"Kind"`
	// Link names the link(s) of link-down, link-up, flap and speed: two node names or
	// glob patterns ([rack-p0-r0, fabric-p0-f0], [spine-s0-0, "fabric-*"]); every link
	// between a match of the first and a match of the second, parallel links included.
	Link []string `yaml:"Link,omitempty"`
	// Node names the switch(es) of switch-down, switch-up, drain and undrain, or the
	// host(s) of stall and unstall: a name or a glob pattern.
	Node string `yaml:"Node,omitempty"`
	// Period and Count make a flap: Count cycles, each down at At + k x Period and up
	// Down later (Down: default Period / 2, 0 < Down < Period).
	Period units.Time `yaml:"Period,omitempty"`
	Count  int        `yaml:"Count,omitempty"`
	Down   units.Time `yaml:"Down,omitempty"`
	// Speed is the link's speed from At (speed), e.g. 200Gbps for a 400G link that
	// lost half its lanes.
	Speed units.BitRate `yaml:"Speed,omitempty"`

	// where is the file and line that set the event ("" for --set or code).
	where string
}

// Where returns "file:line" of the event's entry, "" when unknown.
func (e *Event) Where() string { return e.where }

// Target returns the event's link or node as written: "a b" or "n".
func (e *Event) Target() string {
	if e.Kind.OnLink() {
		return strings.Join(e.Link, " ")
	}
	return e.Node
}

// validateEvents checks what an event needs without the fabric (names are checked
// by the replay, which has it).
func (c *Config) validateEvents(e *Error) {
	r := &c.Routing
	if r.LocalRepairDelay < 0 || r.LocalRepairDelay > units.Second {
		e.add("Routing.LocalRepairDelay", "%v must be in 0..1s", r.LocalRepairDelay)
	}
	if r.ReconvergenceDelay < r.LocalRepairDelay || r.ReconvergenceDelay > 100*units.Second {
		e.add("Routing.ReconvergenceDelay", "%v must be at least LocalRepairDelay (%v) and at most 100s", r.ReconvergenceDelay, r.LocalRepairDelay)
	}
	for i := range c.Events {
		ev := &c.Events[i]
		at := fmt.Sprintf("Events[%d]", i)
		known := false
		for _, k := range EventKinds {
			known = known || k == ev.Kind
		}
		if !known {
			e.addAt(ev.where, at+".Kind", "%q is unknown (want %s)", string(ev.Kind), kindList())
			continue
		}
		if ev.At < 0 {
			e.addAt(ev.where, at+".At", "%v is before the trace (times count from the first replayed packet)", ev.At)
		}
		if ev.Kind.OnLink() {
			if len(ev.Link) != 2 || ev.Link[0] == "" || ev.Link[1] == "" {
				e.addAt(ev.where, at+".Link", "%s needs Link: [node, node] (names or patterns)", ev.Kind)
			}
			if ev.Node != "" {
				e.addAt(ev.where, at+".Node", "%s names a Link, not a Node", ev.Kind)
			}
		} else {
			if ev.Node == "" {
				e.addAt(ev.where, at+".Node", "%s needs Node (a name or a pattern)", ev.Kind)
			}
			if len(ev.Link) > 0 {
				e.addAt(ev.where, at+".Link", "%s names a Node, not a Link", ev.Kind)
			}
		}
		switch ev.Kind {
		case Flap:
			if ev.Period <= 0 || ev.Count < 1 || ev.Count > 100000 {
				e.addAt(ev.where, at+".Period", "flap needs Period > 0 and Count in 1..100000 (Period %v, Count %d)", ev.Period, ev.Count)
			} else if d := ev.FlapDown(); d <= 0 || d >= ev.Period {
				e.addAt(ev.where, at+".Down", "%v must be in (0, Period %v)", d, ev.Period)
			}
		case Speed:
			if ev.Speed < units.Mbps || ev.Speed > 100*units.Tbps {
				e.addAt(ev.where, at+".Speed", "%v must be between 1Mbps and 100Tbps", ev.Speed)
			}
		}
		if ev.Kind != Flap && (ev.Period != 0 || ev.Count != 0 || ev.Down != 0) {
			e.addAt(ev.where, at+".Period", "Period, Count and Down are for flap only")
		}
		if ev.Kind != Speed && ev.Speed != 0 {
			e.addAt(ev.where, at+".Speed", "Speed is for speed only")
		}
	}
}

// FlapDown is a flap's down time per cycle: Down, or Period / 2.
func (e *Event) FlapDown() units.Time {
	if e.Down != 0 {
		return e.Down
	}
	return e.Period / 2
}

func kindList() string {
	s := make([]string, len(EventKinds))
	for i, k := range EventKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func (e *Error) addAt(where, attr, format string, args ...any) {
	v := Violation{Attr: attr, Rule: fmt.Sprintf(format, args...)}
	if f, l, ok := splitWhere(where); ok {
		v.Source, v.Line = f, l
	}
	e.Violations = append(e.Violations, v)
}

func splitWhere(w string) (string, int, bool) {
	i := strings.LastIndexByte(w, ':')
	if i < 0 {
		return w, 0, w != ""
	}
	var l int
	if _, err := fmt.Sscanf(w[i+1:], "%d", &l); err != nil {
		return w, 0, true
	}
	return w[:i], l, true
}

// LoadEvents reads an events file (replay run --events FILE): a YAML list of events,
// or a mapping whose only key is Events, in the configuration's spelling. Each event
// remembers its file and line.
func LoadEvents(path string) ([]Event, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Violations: []Violation{{Source: path, Rule: err.Error()}}, cause: err}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{Violations: []Violation{{Source: path, Rule: err.Error()}}}
	}
	d := newDecoder(path)
	var list *yaml.Node
	if len(doc.Content) == 1 {
		switch n := doc.Content[0]; n.Kind {
		case yaml.SequenceNode:
			list = n
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == "Events" {
					list = n.Content[i+1]
				} else {
					d.fail(n.Content[i].Line, n.Content[i].Value, "unknown key of an events file (want Events, or a list of events)")
				}
			}
		}
	}
	if list == nil {
		d.fail(0, "", "an events file is a list of events, or Events: with one")
		return nil, d.errs.errOrNil()
	}
	var evs []Event
	d.decode(list, reflect.ValueOf(&evs).Elem(), "Events")
	if err := d.errs.errOrNil(); err != nil {
		return nil, err
	}
	for i := range evs {
		evs[i].where = fmt.Sprintf("%s:%d", path, list.Content[i].Line)
	}
	e := &Error{}
	(&Config{Routing: DefaultRouting(), Events: evs}).validateEvents(e)
	return evs, e.errOrNil()
}
