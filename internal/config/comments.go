package config

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// attrDocs are the one-line comments YAML prints beside each attribute: the unit, the
// choices and what zero means. TestEveryAttributeDocumented keeps them complete.
var attrDocs = map[string]string{
	"Seed":                                      "seeds every random component (PCG of Seed and crc32 of its name)",
	"Switch":                                    "attributes of every switch: Rack, Fabric and Spine",
	"Switch.BufferSize":                         "shared packet buffer, bytes",
	"Switch.CellSize":                           "buffer accounting unit, bytes",
	"Switch.DscpToTc":                           "DSCP -> TC where not DSCP/8, e.g. {24: 0}; unlisted DSCPs keep DSCP/8",
	"Switch.Pools":                              "at most 8; Size is a share of the buffer left after headroom, or bytes",
	"Switch.Pools.Name":                         "",
	"Switch.Pools.Size":                         "",
	"Switch.Pools.TrafficClasses":               "",
	"Switch.PfcEnabled":                         "TCs with PFC; a pool of PFC TCs is lossless",
	"Switch.Headroom":                           "per (port, lossless pool): auto (docs/model.md#headroom-sizing) or bytes",
	"Switch.XoffAlpha":                          "dynamic Xoff = XoffAlpha x (pool size - pool shared), when Xoff is 0",
	"Switch.Xoff":                               "fixed Xoff, bytes; 0 = dynamic",
	"Switch.Xon":                                "XonThreshold = max(Xon, Xoff - XonOffset), bytes",
	"Switch.XonOffset":                          "bytes",
	"Switch.EgressLimitMode":                    "lossy egress queue limit: dynamic | fixed",
	"Switch.EgressAlpha":                        "dynamic limit = EgressAlpha x (pool size - pool used)",
	"Switch.EgressQueueLimit":                   "fixed mode, bytes",
	"Switch.EgressQueueLimitBdp":                "fixed mode, multiple of the fabric BDP; wins when > 0",
	"Switch.EcnEnabled":                         "TCs that may be marked CE",
	"Switch.EcnMinThreshold":                    "RED: no marking below this average queue, bytes",
	"Switch.EcnMaxThreshold":                    "RED: every ECN-capable packet marked at or above, bytes",
	"Switch.EcnMaxProbability":                  "marking probability just below EcnMaxThreshold, [0,1]",
	"Switch.EcnWeight":                          "queue EWMA weight, (0,1]; 1 = instantaneous",
	"Switch.EcnMarkAt":                          "RED reads the queue at dequeue (without the packet) | enqueue (with it)",
	"Switch.EcnClasses":                         "per-TC overrides of the three ECN numbers",
	"Switch.EcnClasses.EcnMinThreshold":         "",
	"Switch.EcnClasses.EcnMaxThreshold":         "",
	"Switch.EcnClasses.EcnMaxProbability":       "",
	"Switch.Mtu":                                "largest IPv4 packet, bytes (frame + 18, wire + 38)",
	"Switch.ForwardingLatency":                  "delay before ingress admission",
	"Switch.SwitchingCapacity":                  "compared with the sum of port speeds (0 = that sum); never limits",
	"Switch.EcmpHashMethod":                     "crc32 | crc32WithSalt | crc16 | crc16Ccitt | xor16 | toeplitz",
	"Switch.HashSalt":                           "null = crc32(switch name) XOR Seed, per switch",
	"Switch.LoadBalancingMethod":                "none | flowlet",
	"Switch.Flowlet":                            "LoadBalancingMethod flowlet",
	"Switch.Flowlet.Gap":                        "idle time after which a flow may move",
	"Switch.Flowlet.FlowTableSize":              "hashed entries per equal-cost set; 0 = exact",
	"Switch.Flowlet.PreferUnpaused":             "avoid members PFC is pausing",
	"Switch.BufferStatsReportInterval":          "buffer sample period; 0 = none",
	"Topology":                                  "Clos fabric (docs/model.md#clos-builder), or a topology file",
	"Topology.File":                             "topology file (docs/topology.md); \"\" = the Clos below",
	"Switches":                                  "named switch profiles inheriting from Switch (docs/topology.md#profiles)",
	"Transport":                                 "closed-loop replay: simulated TCP and RoCEv2 senders",
	"Transport.Mode":                            "open (captured times) | closed (senders' congestion control decides)",
	"Transport.Tcp":                             "auto (dctcp if ECN-capable, else newreno) | dctcp | newreno | open",
	"Transport.Roce":                            "RoCEv2 (UDP port 4791): dcqcn | open",
	"Transport.InitialWindow":                   "N of TCP's initial window min(N SMSS, max(2 SMSS, InitialWindowBytes))",
	"Transport.InitialWindowBytes":              "initial window's byte bound (RFC 6928: 14600); 0 = N segments (Linux)",
	"Transport.Mss":                             "TCP SMSS without a captured SYN MSS option; 0 = Mtu minus the headers",
	"Transport.IdleRestart":                     "window after an idle period > RTO: rfc5681 (min(cwnd, IW)) | linux (halved per RTO) | off",
	"Transport.LimitedTransmit":                 "TCP: a new segment on each of the first two duplicate ACKs (RFC 3042)",
	"Transport.MinRto":                          "floor of TCP's retransmission timeout",
	"Transport.InitialRto":                      "TCP retransmission timeout before the first RTT sample",
	"Transport.MaxRto":                          "cap of the timeout's exponential backoff",
	"Transport.DctcpG":                          "DCTCP alpha gain, (0,1]",
	"Transport.MessageGap":                      "idle gap that ends a message (both modes); 0 = 4 x the base RTT",
	"Transport.Causality":                       "closed loop, a message after a reverse one: captured (its time) | request (after its delivery + think time)",
	"Transport.CnpInterval":                     "at most one CNP per flow per interval",
	"Transport.CnpDscp":                         "DSCP of CNPs (48: TC 6)",
	"Transport.NakInterval":                     "RoCE receiver re-sends its NAK after this long while still waiting; 0 = once per gap",
	"Transport.NicControlPriority":              "control packets a NIC sends before its host's data: roce | all (TCP ACKs too) | none",
	"Transport.DcqcnVariant":                    "DCQCN reaction point: mlx (ConnectX, HPCC) | paper (sets the paper's defaults)",
	"Transport.DcqcnG":                          "DCQCN alpha gain, (0,1]",
	"Transport.AlphaUpdateInterval":             "DCQCN alpha update period",
	"Transport.RateDecreaseInterval":            "DCQCN rate cut period (if a CNP arrived)",
	"Transport.RateIncreaseTimer":               "DCQCN rate increase period after a cut",
	"Transport.FastRecoverySteps":               "DCQCN F: fast-recovery steps before additive increase",
	"Transport.RateAI":                          "DCQCN additive increase; 0 = 5 Mb/s per 25 Gb/s of NIC speed",
	"Transport.RateHAI":                         "DCQCN hyper increase; 0 = 50 Mb/s per 25 Gb/s of NIC speed",
	"Transport.MinRate":                         "DCQCN rate floor",
	"Transport.ClampTargetRate":                 "DCQCN: RT = RC at every cut (true) or only after an increase",
	"Transport.RateOnFirstCnp":                  "mlx: the first CNP sets RC = RT = this x RC, [0,1]",
	"Transport.ByteCounter":                     "paper: a rate-increase event per this many bytes sent; 0 = none",
	"Transport.RoceTimeout":                     "RoCE go-back-N timeout without progress",
	"Topology.Pods":                             "1 = two tiers, no spines",
	"Topology.RacksPerPod":                      "",
	"Topology.HostsPerRack":                     "",
	"Topology.FabricPerPod":                     "also the number of spine planes",
	"Topology.SpinesPerPlane":                   "",
	"Topology.HostLink":                         "host - rack",
	"Topology.HostLink.Speed":                   "",
	"Topology.HostLink.PropagationDelay":        "one way",
	"Topology.RackFabricLink":                   "rack - fabric",
	"Topology.RackFabricLink.Speed":             "",
	"Topology.RackFabricLink.PropagationDelay":  "",
	"Topology.FabricSpineLink":                  "fabric - spine",
	"Topology.FabricSpineLink.Speed":            "",
	"Topology.FabricSpineLink.PropagationDelay": "",
}

// comment adds attrDocs as line comments to an encoded configuration.
func comment(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			comment(c, path)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			comment(c, path)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			doc := attrDocs[p]
			if path == "Switch.EcnClasses" || path == "Switch.DscpToTc" {
				p, doc = path, "" // keys are TCs or DSCPs
			}
			if p == "Switch.HashSalt" && v.Kind == yaml.ScalarNode && v.Tag == "!!int" {
				if x, err := strconv.ParseUint(v.Value, 10, 32); err == nil {
					v.Value = fmt.Sprintf("0x%08x", x)
				}
			}
			if doc != "" {
				if v.Kind == yaml.ScalarNode || len(v.Content) == 0 { // a scalar, {} or []
					v.LineComment = doc
				} else {
					k.LineComment = doc
				}
			}
			comment(v, p)
		}
	}
}
