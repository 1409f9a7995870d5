package main

import "strconv"

// protoName names the common IP protocols ("TCP"), others by number.
func protoName(p uint8) string {
	switch p {
	case 1:
		return "ICMP"
	case 6:
		return "TCP"
	case 17:
		return "UDP"
	case 58:
		return "ICMPv6"
	}
	return strconv.Itoa(int(p))
}
