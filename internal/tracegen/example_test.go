package tracegen_test

import (
	"bytes"
	"fmt"
	"net/netip"

	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
)

// A 4-to-1 RoCEv2 incast at line rate for 10 us, written as a headers-only pcap: 29
// packets of 334.24 ns per sender, staggered by a quarter packet; the last one starts
// at 250.68 + 28 x 334.24 = 9609.4 ns, written as 9610 ns. Each record is 16 + 64 bytes.
func ExampleScenario_WritePcap() {
	in := &tracegen.Incast{
		Start:    0,
		Duration: 10 * units.Microsecond,
		Senders: []netip.Addr{tracegen.HostAddr(0, 1, 0), tracegen.HostAddr(0, 2, 0),
			tracegen.HostAddr(1, 0, 0), tracegen.HostAddr(1, 1, 0)},
		Receiver: tracegen.HostAddr(0, 0, 0),
		Class:    tracegen.RoCEv2,
		Length:   tracegen.RoCELength,
	}
	s := &tracegen.Scenario{Name: "example.pcap", Seed: 1, Generators: []tracegen.Generator{in}}
	var buf bytes.Buffer
	st, err := s.WritePcap(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d packets (%d per sender), %d IPv4 bytes in a %d-byte file, %v\n",
		st.Packets, in.PacketsPerSender(), st.Bytes, buf.Len(), st.Last.Sub(st.First))
	// Output:
	// 116 packets (29 per sender), 480240 IPv4 bytes in a 9304-byte file, 9.61µs
}

// A small benchmark trace: Poisson arrivals over 4096 flows among the 128 default
// hosts; each record is a 16-byte header and at most 64 captured bytes, whatever the
// packet's real size.
func ExampleWriteBenchmark() {
	var buf bytes.Buffer
	st, err := tracegen.WriteBenchmark(&buf, tracegen.Benchmark{Packets: 1000, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d packets over %d flows, %d-byte file, %d IPv4 bytes in %v\n",
		st.Packets, st.Flows, buf.Len(), st.Bytes, st.Last.Sub(st.First))
	// Output:
	// 1000 packets over 4096 flows, 79524-byte file, 3628672 IPv4 bytes in 8.91µs
}
