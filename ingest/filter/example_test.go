package filter_test

import (
	"fmt"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/ingest/filter"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

func ExampleParse() {
	f, err := filter.Parse("udp dst port 4791 and not src net 10.9.0.0/16")
	if err != nil {
		fmt.Println(err)
		return
	}
	roce := ingest.Packet{Src: ipaddr.MustParse("10.0.1.5"), Dst: ipaddr.MustParse("10.0.2.6"), Proto: 17, SrcPort: 50000, DstPort: 4791}
	fmt.Println(f.Match(&roce))
	roce.Src = ipaddr.MustParse("10.9.3.1")
	fmt.Println(f.Match(&roce))

	_, err = filter.Parse("tcp and prot 80")
	fmt.Println(err)
	_, err = filter.Parse("tcp or udp and port 53")
	fmt.Println(err)
	// Output:
	// true
	// false
	// column 9, "prot": unknown word (did you mean port?)
	// column 12, "and": and after or (column 5) needs parentheses: write either (x or y) and z, or x or (y and z) (tcpdump reads and and or left to right, tshark binds and first)
}
