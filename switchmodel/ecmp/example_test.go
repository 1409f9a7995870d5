package ecmp_test

import (
	"fmt"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

func ExampleMethod_Hash() {
	// Microsoft's RSS verification vector: 66.9.149.187:2794 -> 161.142.100.80:1766.
	k := ecmp.MakeKey([4]byte{66, 9, 149, 187}, [4]byte{161, 142, 100, 80}, ecmp.ProtoTCP, 2794, 1766, false)
	fmt.Printf("toeplitz %#08x\n", ecmp.Toeplitz.Hash(0, &k))
	// ICMP has no ports: the key's ports are 0 and Toeplitz hashes the addresses only.
	icmp := ecmp.MakeKey([4]byte{66, 9, 149, 187}, [4]byte{161, 142, 100, 80}, 1, 2794, 1766, false)
	fmt.Printf("toeplitz %#08x\n", ecmp.Toeplitz.Hash(0, &icmp))

	salt := ecmp.DefaultSalt("rack-p0-r1", 1)
	fmt.Println("member of 4:", ecmp.CRC32WithSalt.Hash(salt, &k)%4)
	// Output:
	// toeplitz 0x51ccc178
	// toeplitz 0x323e8fc2
	// member of 4: 3
}

// view is a switch's view of a 4-member set: bytes queued per port and PFC pauses.
type view struct {
	queued [4]int64
	paused [4]bool
}

func (v *view) EgressBytes(m int) int64     { return v.queued[m] }
func (v *view) Paused(m int, tc uint8) bool { return v.paused[m] }

func ExampleBalancer() {
	cfg := ecmp.DefaultConfig()
	cfg.LoadBalancing = ecmp.Flowlet
	cfg.Salt = ecmp.DefaultSalt("rack-p0-r0", 1)
	b, err := ecmp.NewBalancer(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	uplinks := b.AddSet(4) // the rack's four fabric uplinks, in port order

	k := ecmp.MakeKey([4]byte{10, 0, 0, 1}, [4]byte{10, 1, 0, 1}, ecmp.ProtoUDP, 49152, 4791, false)
	v := &view{queued: [4]int64{9000, 0, 4500, 0}, paused: [4]bool{false, true, false, false}}
	us := units.Microsecond

	fmt.Println(b.Select(0, uplinks, &k, 3, 1024, v))     // new flow: least occupied unpaused member
	v.queued = [4]int64{0, 0, 0, 9000}                    // member 3 fills up
	fmt.Println(b.Select(50*us, uplinks, &k, 3, 1024, v)) // 50us later: same flowlet
	// Idle 100us = Gap: a new flowlet. Members 0 and 2 tie (empty, unpaused); the
	// current member 3 is not among them, so the first of them from hash mod 4 = 1
	// onward (1 is paused) wins: 2.
	fmt.Println("hash mod 4:", b.HashOf(&k)%4)
	fmt.Println(b.Select(150*us, uplinks, &k, 3, 1024, v))
	for _, r := range b.Records() {
		fmt.Printf("%+v\n", r)
	}
	// Output:
	// 3
	// 3
	// hash mod 4: 1
	// 2
	// {Set:0 Member:0 Flows:0 Flowlets:0 Packets:0 Bytes:0 MovedIn:0 MovedOut:0 FlowsMovedIn:0 FlowsMovedOut:0}
	// {Set:0 Member:1 Flows:0 Flowlets:0 Packets:0 Bytes:0 MovedIn:0 MovedOut:0 FlowsMovedIn:0 FlowsMovedOut:0}
	// {Set:0 Member:2 Flows:1 Flowlets:1 Packets:1 Bytes:1024 MovedIn:1 MovedOut:0 FlowsMovedIn:0 FlowsMovedOut:0}
	// {Set:0 Member:3 Flows:1 Flowlets:1 Packets:2 Bytes:2048 MovedIn:0 MovedOut:1 FlowsMovedIn:0 FlowsMovedOut:0}
}

func ExamplePathMembers() {
	// A flow from pod 0 to pod 1 picks a fabric switch at its rack, then a spine.
	k := ecmp.MakeKey([4]byte{10, 0, 1, 5}, [4]byte{10, 1, 2, 7}, ecmp.ProtoTCP, 49152, 443, false)
	hops := []ecmp.Hop{
		{Method: ecmp.CRC32WithSalt, Salt: ecmp.DefaultSalt("rack-p0-r1", 1), Members: 4},
		{Method: ecmp.CRC32WithSalt, Salt: ecmp.DefaultSalt("fabric-p0-f3", 1), Members: 4}, // the rack picks member 3
	}
	fmt.Println(ecmp.PathMembers(nil, &k, hops))
	// Output: [3 0]
}
