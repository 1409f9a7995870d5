package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/replay"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

func newPathCmd() *cobra.Command {
	var (
		cf         configFlags
		trace      string
		hosts      string
		rackPrefix int
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "path [-c cfg] [--hosts MAP] [--trace FILE] [--hash METHOD|all] [--json] SRC DST PROTO SPORT DPORT",
		Short: "Show the hops one flow takes and the ECMP hash and member at each equal-cost set",
		Long: `path is the simulator's "show load-balance": for one 5-tuple it prints the hops from
the source host to the destination host and, at each equal-cost set, the hash value
the switch computes (with its method and salt) and the member it picks (hash mod set
size, members in port order). PROTO is tcp, udp or a protocol number; ports are 0
for protocols other than TCP and UDP.

Endpoints are mapped to hosts by the host mapping (--hosts) over the endpoints of
--trace FILE, or, without --trace, over the two endpoints alone, as if they were the
whole trace. --hash all shows all six methods. Under --lb flowlet the hops are the
hash choices, where a new flowlet starts when members are equally loaded.`,
		Example: `  replay path 10.0.0.1 10.0.4.1 udp 1000 4791
  replay path --trace testdata/pcaps/many-flows.pcap --hash all --json 10.0.0.1 10.1.0.1 tcp 40000 80`,
		Args: exactArgs(5),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, dst, proto, sport, dport, err := parseTuple(args)
			if err != nil {
				return usageError{Err: err}
			}
			cfg, warns, err := cf.load()
			if err != nil {
				return err
			}
			for _, w := range warns {
				warnFunc(cmd)(w)
			}
			clos, err := replay.NewClos(cfg.Topology)
			if err != nil {
				return inputError{Err: err}
			}
			eps := [][4]byte{src.As4(), dst.As4()}
			if trace != "" {
				if eps, err = traceEndpoints(trace); err != nil {
					return classifyInput(err)
				}
			}
			hm, err := replay.MapHosts(hosts, eps, clos.Grid, rackPrefix)
			if err != nil {
				return inputError{Err: err}
			}
			methods := []ecmp.Method{cfg.Switch.EcmpHashMethod}
			if cf.hash == "all" {
				methods = ecmp.AllMethods[:]
			}
			results := map[string][]replay.PathHop{}
			for _, m := range methods {
				c := *cfg
				c.Switch.EcmpHashMethod = m
				hops, err := clos.FlowPath(&c, hm, src, dst, proto, sport, dport)
				if err != nil {
					return replayError(err)
				}
				results[m.String()] = hops
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printPathJSON(out, results, methods, cf.hash == "all")
			}
			return printPathText(out, results, methods, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&trace, "trace", "", "map endpoints as a replay of this capture would")
	f.StringVar(&hosts, "hosts", "subnet", "host mapping: subnet, hash, or a CSV file of cidr,host-name lines")
	f.IntVar(&rackPrefix, "rack-prefix", 24, "subnet mapping: group endpoints by this prefix length")
	f.BoolVar(&asJSON, "json", false, `print {"hops": [...]} ({"methods": {...}} with --hash all)`)
	cf.register(cmd, true)
	return cmd
}

func parseTuple(args []string) (src, dst netip.Addr, proto uint8, sport, dport uint16, err error) {
	if src, err = netip.ParseAddr(args[0]); err != nil || !src.Is4() {
		return src, dst, 0, 0, 0, fmt.Errorf("SRC %q: want an IPv4 address", args[0])
	}
	if dst, err = netip.ParseAddr(args[1]); err != nil || !dst.Is4() {
		return src, dst, 0, 0, 0, fmt.Errorf("DST %q: want an IPv4 address", args[1])
	}
	switch strings.ToLower(args[2]) {
	case "tcp":
		proto = 6
	case "udp":
		proto = 17
	case "icmp":
		proto = 1
	default:
		n, perr := strconv.ParseUint(args[2], 0, 8)
		if perr != nil {
			return src, dst, 0, 0, 0, fmt.Errorf("PROTO %q: want tcp, udp, icmp or a number 0..255", args[2])
		}
		proto = uint8(n)
	}
	ports := [2]uint16{}
	for i, a := range args[3:5] {
		n, perr := strconv.ParseUint(a, 10, 16)
		if perr != nil {
			return src, dst, 0, 0, 0, fmt.Errorf("port %q: want 0..65535", a)
		}
		ports[i] = uint16(n)
	}
	return src, dst, proto, ports[0], ports[1], nil
}

func traceEndpoints(path string) ([][4]byte, error) {
	r, err := ingest.Open([]string{path}, ingest.Options{})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	seen := map[[4]byte]bool{}
	var eps [][4]byte
	var p ingest.Packet
	for {
		ok, err := r.Next(&p)
		if err != nil {
			return nil, err
		}
		if !ok {
			return eps, nil
		}
		for _, a := range [][4]byte{p.Src, p.Dst} {
			if !seen[a] {
				seen[a] = true
				eps = append(eps, a)
			}
		}
	}
}

func printPathJSON(w io.Writer, results map[string][]replay.PathHop, methods []ecmp.Method, all bool) error {
	var v any
	if all {
		m := map[string]any{}
		for name, hops := range results {
			m[name] = map[string]any{"hops": hops}
		}
		v = map[string]any{"methods": m}
	} else {
		v = map[string]any{"hops": results[methods[0].String()]}
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func printPathText(w io.Writer, results map[string][]replay.PathHop, methods []ecmp.Method, cfg *config.Config) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for i, m := range methods {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "%s:\n", m)
		fmt.Fprintln(tw, "  node\tset\thash\tmember\tport\tnext")
		for _, h := range results[m.String()] {
			hash := h.Hash
			if hash == "" {
				hash = "-"
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%d\t%d\t%s\n", h.Node, h.SetSize, hash, h.Member, h.Port, h.Next)
		}
	}
	return tw.Flush()
}
