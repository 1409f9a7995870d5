package replay

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// TestDscpToTc pins docs/model.md#classification through a whole replay: an 8-to-1
// incast of CS3 (DSCP 24, 9000-byte UDP packets at line rate from rack-p0-r0 to a
// host of rack-p0-r1). By default DSCP 24 is TC 3, lossless: the records show PFC
// pauses of TC 3, no drop, and every packet counted in TC 3. With
// Switch.DscpToTc {24: 0} it is TC 0, lossy: not one PFC frame, the flows, the port
// counters and the drops (at the egress limit) all in class 0.
func TestDscpToTc(t *testing.T) {
	const senders, perSender = 8, 400
	ser := units.SerializationTime(9000+tracegen.WireOverhead, 100*units.Gbps)
	var pkts []tracegen.Packet
	for i := 0; i < perSender; i++ {
		for s := 0; s < senders; s++ {
			pkts = append(pkts, tracegen.Packet{Time: units.Time(i) * ser, Src: addr(fmt.Sprintf("10.0.0.%d", s+1)), Dst: addr("10.0.1.1"),
				Proto: layers.IPProtocolUDP, SrcPort: uint16(5000 + s), DstPort: 5001, DSCP: 24, Length: 9000})
		}
	}
	trace := writeTrace(t, pkts)
	for _, c := range []struct {
		name string
		sets []string
		tc   uint8
	}{{"default", nil, 3}, {"DscpToTc 24:0", []string{"DscpToTc={24: 0}"}, 0}} {
		t.Run(c.name, func(t *testing.T) {
			cfg, _, err := config.Parse(nil, "", c.sets)
			if err != nil {
				t.Fatal(err)
			}
			run, out := runTraceAbs(t, trace, func(o *Options) { o.Config = cfg })
			s := run.Simulation
			total := int64(senders * perSender)
			if s.Injected != total || s.Delivered+s.DroppedTotal()+s.UndrainedTotal() != total {
				t.Fatalf("injected %d, delivered %d, dropped %d, undrained %d: want %d = the sum", s.Injected, s.Delivered, s.DroppedTotal(), s.UndrainedTotal(), total)
			}
			flows, _, err := records.ReadAll(records.OpenFlows(filepath.Join(out, records.FlowsFile)))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range flows {
				if f.DSCP != 24 || f.TC != c.tc {
					t.Fatalf("flow %d: DSCP %d TC %d, want DSCP 24 in TC %d", f.FlowID, f.DSCP, f.TC, c.tc)
				}
			}
			ports, _, err := records.ReadAll(records.OpenPorts(filepath.Join(out, records.PortsFile)))
			if err != nil {
				t.Fatal(err)
			}
			var rx, hostTx int64
			for _, p := range ports {
				if p.TC != c.tc && (p.RxPackets != 0 || p.TxPackets != 0 || p.DropsTotal() != 0) {
					t.Fatalf("port %d of node %d counts traffic in TC %d: %+v", p.Port, p.Node, p.TC, p)
				}
				rx += p.RxPackets
				if p.Tier == records.TierHost {
					hostTx += p.TxPackets
				}
			}
			if hostTx != total || rx < 3*s.Delivered {
				t.Errorf("host NICs sent %d packets (want %d); %d receptions for %d deliveries over 3 links or more", hostTx, total, rx, s.Delivered)
			}
			pfc, _, err := records.ReadAll(records.OpenPFC(filepath.Join(out, records.PFCFile)))
			if err != nil {
				t.Fatal(err)
			}
			drops, _, err := records.ReadAll(records.OpenDrops(filepath.Join(out, records.DropsFile)))
			if err != nil {
				t.Fatal(err)
			}
			switch c.tc {
			case 3:
				var pausedTC3 bool
				for _, e := range pfc {
					pausedTC3 = pausedTC3 || e.TC == 3 && e.Event == records.EventTxPause
				}
				if !pausedTC3 || s.PFCFrames == 0 || s.DroppedTotal() != 0 {
					t.Fatalf("PFC frames %d (TC 3 paused: %v), drops %d: want TC 3 paused and nothing dropped", s.PFCFrames, pausedTC3, s.DroppedTotal())
				}
			case 0:
				if s.PFCFrames != 0 || len(pfc) != 0 {
					t.Fatalf("%d PFC frames, %d pfc.arrow rows: want none for a lossy class", s.PFCFrames, len(pfc))
				}
				if s.DroppedTotal() == 0 || s.Dropped[records.ReasonEgressLimit]+s.Dropped[records.ReasonPoolFull] != s.DroppedTotal() {
					t.Fatalf("drops %v: want egress-limit (or pool-full) drops only", s.Dropped)
				}
				for _, d := range drops {
					if d.TC != 0 {
						t.Fatalf("drop in TC %d, want 0", d.TC)
					}
				}
			}
		})
	}
}
