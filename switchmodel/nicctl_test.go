package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// InjectControl (docs/model.md#nic-control-packets): a host's NIC starts its control
// packets before any data of any class, FIFO among themselves, each still held while
// its own class is paused. Host 0's TC 3 is paused at 0; the NIC is busy with a TC 0
// frame from 0, and then holds, in injection order, a TC 3 control packet, TC 5
// data, a TC 6 control packet and TC 0 data. They leave: the TC 6 control packet,
// TC 5, TC 0 (strict priority among data), and the TC 3 control packet only when
// the class resumes at 100 us.
func TestInjectControlAheadOfData(t *testing.T) {
	st := newStar(t, 2, defaultSwitch(), LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond})
	n := st.net
	h := st.hosts[0]
	type pk struct {
		dscp uint8
		ctl  bool
	}
	in := &scripted{}
	in.h = st.eng.Register(in)
	in.at(st.eng, 0, func(now units.Time) {
		n.rxPFC(now, h.ports[0], &Packet{vector: 1 << 3, quanta: PFCQuanta})
		for _, x := range []pk{{0, false}, {26, true}, {40, false}, {48, true}, {0, false}} {
			id, p := n.NewPacket()
			p.Src, p.Dst, p.Length, p.DSCP = 0, 1, 1000, x.dscp
			if x.ctl {
				p.Class = Ack
				n.InjectControl(h, id)
			} else {
				n.Inject(h, id)
			}
		}
	})
	const resume = 100 * units.Microsecond
	in.at(st.eng, resume, func(now units.Time) { n.rxPFC(now, h.ports[0], &Packet{vector: 1 << 3}) })
	st.eng.Run()
	ser := units.Time(1038 * 80)
	want := []struct {
		tc uint8
		at units.Time
	}{{0, 0}, {6, ser}, {5, 2 * ser}, {0, 3 * ser}, {3, resume}}
	var got []NICEvent
	for _, e := range st.obs.nic {
		if e.Host == h.ID() {
			got = append(got, e)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d departures from host 0, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].TC != w.tc || got[i].Time != w.at {
			t.Errorf("departure %d: TC %d at %v, want TC %d at %v", i, got[i].TC, got[i].Time, w.tc, w.at)
		}
	}
	checkDrained(t, n)
}

// scripted runs functions at chosen times (tests only).
type scripted struct {
	h  HandlerID
	fn []func(units.Time)
}

func (s *scripted) at(e *Engine, t units.Time, f func(units.Time)) {
	s.fn = append(s.fn, f)
	e.Schedule(t, s.h, 0, int64(len(s.fn)-1))
}

func (s *scripted) Handle(now units.Time, kind int32, arg int64) { s.fn[arg](now) }
