package main

import "testing"

func TestProtoName(t *testing.T) {
	for _, c := range []struct{ got, want string }{{protoName(6), "TCP"}, {protoName(17), "UDP"}, {protoName(1), "ICMP"}, {protoName(47), "47"}} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
