package ingest_test

import (
	"fmt"
	"log"
	"os"

	"github.com/tracefabric/tracefabric/ingest"
)

// Stream the IP packets of a capture in timestamp order.
func ExampleOpen() {
	r, err := ingest.Open([]string{"testdata/example.pcap"}, ingest.Options{
		Warn: func(msg string) { log.Print(msg) },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var p ingest.Packet
	for {
		ok, err := r.Next(&p)
		if err != nil {
			log.Fatal(err)
		}
		if !ok {
			break
		}
		fmt.Printf("#%d %d %v dscp=%d ecn=%d len=%d frag=%v\n",
			p.Index, p.Timestamp, p.Tuple(), p.DSCP, p.ECN, p.TotalLen, p.Fragment)
	}
	fs := r.Files()[0]
	fmt.Println(fs.Format, fs.LinkTypes, fs.Resolutions, "records:", fs.Records, "ipv4:", fs.IPv4, "ipv6:", fs.IPv6, "arp:", fs.Skipped[ingest.SkipARP])
	// Output:
	// #0 1714564800000000000 10.1.0.1:49152 > 10.2.0.1:4791 proto 17 dscp=26 ecn=2 len=1052 frag=false
	// #2 1714564800000002000 10.1.0.2:50000 > 10.2.0.1:4791 proto 17 dscp=26 ecn=3 len=4124 frag=false
	// #1 1714564800000003000 10.3.0.7:33000 > 10.2.0.9:80 proto 6 dscp=0 ecn=2 len=1500 frag=false
	// #4 1714564800000010000 10.3.0.7:0 > 10.2.0.9:0 proto 1 dscp=46 ecn=0 len=84 frag=false
	// #5 1714564800000011000 10.1.0.1:0 > 10.2.0.1:0 proto 17 dscp=0 ecn=0 len=1508 frag=true
	// #6 1714564800000012000 [fd00:1::1]:49153 > [fd00:2::1]:4791 proto 17 dscp=26 ecn=2 len=1080 frag=false
	// pcap [ETHERNET(1)] [us] records: 7 ipv4: 5 ipv6: 1 arp: 1
}

// Summarize a trace, as `replay inspect` does.
func ExampleSummarize() {
	s, err := ingest.Summarize([]string{"testdata/example.pcap"}, ingest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := s.WriteText(os.Stdout); err != nil {
		log.Fatal(err)
	}
	// Output:
	// packets          7
	// IPv4 packets     5 (5 flows)
	// IPv6 packets     1 (1 flow)
	// non-IP packets   1
	// skipped          arp 1
	// flows            6
	// endpoints        7
	// DSCP             0: 2 (33.3%), 26: 3 (50.0%), 46: 1 (16.7%)
	// ECN              Not-ECT 2 (33.3%), ECT(0) 3 (50.0%), CE 1 (16.7%)
	// first            2024-05-01T12:00:00.000000000Z
	// last             2024-05-01T12:00:00.000012000Z
	// duration         12 us
	// bytes            9348
	// mean rate        6.232 Gbit/s
	// file             testdata/example.pcap
	//   format         pcap
	//   link types     ETHERNET(1)
	//   timestamps     us
	//   in time order  no
}
