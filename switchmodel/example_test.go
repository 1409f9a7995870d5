package switchmodel_test

import (
	"fmt"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel"
)

type printDeliveries struct{}

func (printDeliveries) Delivered(now units.Time, p *switchmodel.Packet) {
	fmt.Printf("packet %d delivered at %d ps after %d hops\n", p.TraceIndex, now, p.Hops)
}

// Two hosts on one switch: a 1500-byte IPv4 packet crosses two 100 Gb/s links of 1 us:
// 2 x (123,040 ps serialization + 1,000,000 ps propagation).
func Example() {
	eng := switchmodel.NewEngine()
	net := switchmodel.NewNetwork(eng, switchmodel.Options{Seed: 1,
		Observers: switchmodel.Observers{Deliveries: printDeliveries{}}})
	cfg := config.Default().Switch
	tor, _ := net.AddSwitch("rack-p0-r0", config.TierRack, &cfg, nil)
	link := switchmodel.LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond}
	var hosts []*switchmodel.Host
	for i := 0; i < 2; i++ {
		h, _ := net.AddHost(fmt.Sprintf("host-p0-r0-h%d", i))
		_, port, _ := net.Connect(h, tor, link)
		set, _ := tor.AddEqualCostSet([]int{port})
		tor.SetRoute(h.Index(), set)
		hosts = append(hosts, h)
	}
	if _, err := net.Start(); err != nil {
		fmt.Println(err)
		return
	}
	id, p := net.NewPacket()
	p.Src, p.Dst, p.Length, p.DSCP, p.TraceIndex = 0, 1, 1500, 3<<3, 42
	net.InjectAt(0, hosts[0], id)
	eng.Run()
	c := net.Counters()
	fmt.Println("delivered", c.Delivered, "packet-hops", c.PacketHops, "accounting:", net.CheckAccounting())
	// Output:
	// packet 42 delivered at 2246080 ps after 2 hops
	// delivered 1 packet-hops 2 accounting: <nil>
}
