package transport

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// star is hosts around one switch, every link with the same spec, with a transport
// layer and observers that record deliveries, drops and buffer samples.
type star struct {
	eng   *switchmodel.Engine
	net   *switchmodel.Network
	sw    *switchmodel.Switch
	hosts []*switchmodel.Host
	layer *Layer
	rec   *recorder
}

// recorder keeps what the tests measure.
type recorder struct {
	deliveries  []delivery
	drops       []switchmodel.DropEvent
	dropClass   []switchmodel.Class
	samples     []switchmodel.BufferSample
	onDrop      func(switchmodel.DropEvent)
	closedDrops int
	nic         []nicDeparture
}

// nicDeparture is a packet starting to transmit at a host's NIC.
type nicDeparture struct {
	at    units.Time
	node  int32
	class switchmodel.Class
	seq   int32
}

func (r *recorder) NICDequeue(e switchmodel.NICEvent) {
	r.nic = append(r.nic, nicDeparture{at: e.Time, node: e.Host, class: e.Packet.Class, seq: e.Packet.Seq})
}

type delivery struct {
	at     units.Time
	flow   int64
	seq    int32
	length int32
	ce     bool
	inject units.Time
}

func (r *recorder) Delivered(now units.Time, p *switchmodel.Packet) {
	if p.Class != switchmodel.ClosedData {
		return
	}
	r.deliveries = append(r.deliveries, delivery{at: now, flow: p.FlowID, seq: p.Seq, length: p.Length, ce: p.ECN == switchmodel.CE, inject: p.Inject})
}

func (r *recorder) Drop(e switchmodel.DropEvent) {
	r.drops = append(r.drops, e)
	r.dropClass = append(r.dropClass, e.Packet.Class)
	if e.Packet.Class == switchmodel.ClosedData {
		r.closedDrops++
	}
}

func (r *recorder) BufferSample(b switchmodel.BufferSample) { r.samples = append(r.samples, b) }

func newStar(t testing.TB, n int, sw config.Switch, tr config.Transport, link switchmodel.LinkSpec) *star {
	t.Helper()
	rec := &recorder{}
	eng := switchmodel.NewEngine()
	net := switchmodel.NewNetwork(eng, switchmodel.Options{Seed: 1, FabricBDP: 100_000,
		Observers: switchmodel.Observers{Deliveries: rec, Drops: rec, Buffer: rec, NIC: rec}})
	s, err := net.AddSwitch("sw", config.TierNone, &sw, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := &star{eng: eng, net: net, sw: s, rec: rec}
	for i := 0; i < n; i++ {
		h, err := net.AddHost("h" + string(rune('a'+i%26)) + string(rune('0'+i/26)))
		if err != nil {
			t.Fatal(err)
		}
		_, sp, err := net.Connect(h, s, link)
		if err != nil {
			t.Fatal(err)
		}
		set, err := s.AddEqualCostSet([]int{sp})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetRoute(h.Index(), set); err != nil {
			t.Fatal(err)
		}
		st.hosts = append(st.hosts, h)
	}
	if st.layer, err = New(net, tr); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Start(); err != nil {
		t.Fatal(err)
	}
	return st
}

func link100G() switchmodel.LinkSpec {
	return switchmodel.LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond}
}

// key adds a distinct ECMP key per i to the network's key table (stars route by
// destination alone).
func (st *star) key(i int) switchmodel.KeyID {
	return st.net.AddKey(ecmp.MakeKey([4]byte{byte(i), byte(i >> 8)}, [4]byte{}, 0, 0, 0, false))
}

// offers makes flow segments available at given times, from an event handler.
type offers struct {
	l    *Layer
	h    switchmodel.HandlerID
	list []offer
}

type offer struct {
	at   units.Time
	flow int32
	seg  Segment
}

// schedule registers the offers (in time order) with the engine.
func scheduleOffers(st *star, list []offer) {
	o := &offers{l: st.layer, list: list}
	o.h = st.eng.Register(o)
	for i, x := range list {
		st.eng.Schedule(x.at, o.h, 0, int64(i))
	}
}

func (o *offers) Handle(now units.Time, kind int32, arg int64) {
	x := o.list[arg]
	o.l.Offer(x.flow, x.seg)
}

// tcpSeg is a TCP segment of IPv4 length l (payload l-40).
func tcpSeg(l int32, ecn uint8, trace int64) Segment {
	return Segment{Length: l, Payload: l - 40, ECN: ecn, TraceIndex: trace}
}

// checkConservation: every data and control packet injected was delivered or dropped,
// the network's buffers are back to zero.
func checkConservation(t *testing.T, st *star) {
	t.Helper()
	c := st.net.Counters()
	if o := c.Outstanding(); o != 0 {
		t.Errorf("%d data packets outstanding", o)
	}
	for cl, cc := range c.Control {
		var d int64
		for _, x := range cc.Dropped {
			d += x
		}
		if cc.Injected != cc.Delivered+d {
			t.Errorf("%v: injected %d, delivered %d, dropped %d", switchmodel.Class(cl), cc.Injected, cc.Delivered, d)
		}
	}
	if err := st.net.CheckAccounting(); err != nil {
		t.Error(err)
	}
}
