package ingest_test

import (
	"fmt"
	"log"
	"os"

	"github.com/tracefabric/tracefabric/ingest"
)

// Stream the IPv4 packets of a capture in timestamp order.
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
	fmt.Println(fs.Format, fs.LinkTypes, fs.Resolutions, "records:", fs.Records, "ipv4:", fs.IPv4, "arp:", fs.Skipped[ingest.SkipARP], "ipv6:", fs.Skipped[ingest.SkipIPv6])
	// Output:
	// #0 1714564800000000000 10.1.0.1:49152 > 10.2.0.1:4791 proto 17 dscp=26 ecn=2 len=1052 frag=false
	// #2 1714564800000002000 10.1.0.2:50000 > 10.2.0.1:4791 proto 17 dscp=26 ecn=3 len=4124 frag=false
	// #1 1714564800000003000 10.3.0.7:33000 > 10.2.0.9:80 proto 6 dscp=0 ecn=2 len=1500 frag=false
	// #4 1714564800000010000 10.3.0.7:0 > 10.2.0.9:0 proto 1 dscp=46 ecn=0 len=84 frag=false
	// #5 1714564800000011000 10.1.0.1:0 > 10.2.0.1:0 proto 17 dscp=0 ecn=0 len=1508 frag=true
	// pcap [ETHERNET(1)] [us] records: 7 ipv4: 5 arp: 1 ipv6: 1
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
	// packets           7
	// IPv4 packets      5
	// non-IPv4 packets  2
	// skipped           ipv6 1, arp 1
	// flows             5
	// endpoints         5
	// DSCP              0: 2 (40.0%), 26: 2 (40.0%), 46: 1 (20.0%)
	// ECN               Not-ECT 2 (40.0%), ECT(0) 2 (40.0%), CE 1 (20.0%)
	// first             2024-05-01T12:00:00.000000000Z
	// last              2024-05-01T12:00:00.000011000Z
	// duration          11 us
	// bytes             8268
	// mean rate         6.013 Gbit/s
	// file              testdata/example.pcap
	//   format          pcap
	//   link types      ETHERNET(1)
	//   timestamps      us
	//   in time order   no
}
