package replay

import (
	"time"

	"github.com/google/gopacket"
)

func captureInfo(ns int64, captured, wire int) gopacket.CaptureInfo {
	return gopacket.CaptureInfo{Timestamp: time.Unix(1_700_000_000, ns).UTC(), CaptureLength: captured, Length: wire}
}
