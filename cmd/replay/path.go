package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/spf13/pflag"
	"github.com/tracefabric/tracefabric/cmd/internal/cli"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

func newPathCmd() *cobra.Command {
	var (
		cf     configFlags
		tf     traceFlags
		runDir string
		traces []string
		opt    replay.Options
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "path [flags] SRC DST PROTO SPORT DPORT",
		Short: "Show the hops one flow takes and the ECMP hash and member at each equal-cost set",
		Long: `path is the simulator's "show load-balance": for one 5-tuple it prints the host each
address maps to, then the hops from the source host to the destination host and, at
each equal-cost set, the hash value the switch computes (with its method and salt)
and the member it picks (hash mod set size, members in port order). PROTO is tcp,
udp, icmp or a protocol number; ports are 0 for protocols other than TCP and UDP.

--run DIR takes everything from a run directory's run.json: the configuration, the
host mapping, the trace (read again to map its endpoints as the run did), the
window and the seed; the run's hash method unless --hash says otherwise. Otherwise
endpoints are mapped by the host mapping (--hosts) over the endpoints of --trace
FILE, as 'replay run' with the same flags would, or, without --trace, over the two
endpoints alone, as if they were the whole trace. --hash all shows all six methods.
Under --lb flowlet the hops are the hash choices, where a new flowlet starts when
members are equally loaded.`,
		Example: `  replay path 10.0.0.1 10.0.4.1 udp 1000 4791
  replay path --run out/demo 10.1.3.1 10.0.0.1 udp 49152 4791
  replay path --trace testdata/pcaps/many-flows.pcap --hash all --json 10.0.0.1 10.1.0.1 tcp 40000 80`,
		Args: cli.NamedArgs("SRC", "DST", "PROTO", "SPORT", "DPORT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, dst, proto, sport, dport, err := parseTuple(args)
			if err != nil {
				return usageError{Err: err}
			}
			var cfg *config.Config
			var pr *replay.Prepared
			if runDir != "" {
				if cfg, pr, err = prepareFromRun(cmd, runDir, &cf); err != nil {
					return err
				}
			} else {
				c, err := cf.load(cmd)
				if err != nil {
					return err
				}
				cfg = c
				if len(traces) > 0 {
					if opt.Window, err = tf.window(); err != nil {
						return err
					}
					if opt.Stdin, err = openStdin(traces, os.Stdin); err != nil {
						return err
					}
					opt.Traces, opt.Config, opt.ReorderWindow, opt.Strict = traces, cfg, tf.reorder, tf.strict
					opt.Warn, opt.Context = warnFunc(cmd), cmd.Context()
					if pr, err = replay.PrepareMapping(opt); err != nil {
						return replayError(err)
					}
				} else {
					// No trace: the two endpoints are the whole trace.
					topo, err := replay.NewTopology(cfg)
					if err != nil {
						return inputError{Err: err}
					}
					hm, err := replay.MapRacks(opt.Hosts, []ipaddr.Addr{ipaddr.FromNetip(src), ipaddr.FromNetip(dst)}, topo.HostRacks, topo, opt.RackPrefix, opt.RackPrefix6)
					if err != nil {
						return inputError{Err: err}
					}
					pr = &replay.Prepared{Topo: topo, HostMap: hm}
				}
			}
			methods := []ecmp.Method{cfg.Switch.EcmpHashMethod}
			if cf.hash == "all" {
				methods = ecmp.AllMethods[:]
			}
			hosts := mappedHosts(pr.HostMap, src, dst)
			results := map[string][]replay.PathHop{}
			for _, m := range methods {
				c := *cfg
				c.SetHashMethod(m)
				hops, err := pr.Topo.FlowPath(&c, pr.HostMap, src, dst, proto, sport, dport)
				if err != nil {
					return replayError(err)
				}
				results[m.String()] = hops
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printPathJSON(out, hosts, results, methods, cf.hash == "all")
			}
			return printPathText(out, hosts, results, methods)
		},
	}
	f := cmd.Flags()
	f.StringVar(&runDir, "run", "", "take the configuration, host mapping, trace and seed from the run directory `DIR` (its run.json)")
	f.StringArrayVar(&traces, "trace", nil, "map endpoints as a replay of this capture would (repeatable, as replay run's TRACE...)")
	f.StringVar(&opt.Hosts, "hosts", "subnet", "host mapping: subnet (by --rack-prefix groups, spilling to the next rack when full), spread (endpoints round-robin over the racks), hash, or a CSV file of cidr,host-name lines")
	f.IntVar(&opt.RackPrefix, "rack-prefix", 24, "subnet mapping: group IPv4 endpoints by this prefix length")
	f.IntVar(&opt.RackPrefix6, "rack-prefix6", 64, "subnet mapping: group IPv6 endpoints by this prefix length")
	f.BoolVar(&asJSON, "json", false, `print {"hosts": {...}, "hops": [...]} ({"hosts", "methods": {...}} with --hash all)`)
	cf.register(cmd, true)
	tf.register(cmd, false)
	return cmd
}

// prepareFromRun maps the run directory's trace as its run did: configuration,
// host mapping options, window and seed from run.json. Flags that run.json decides
// are refused; --hash picks another method (or all).
func prepareFromRun(cmd *cobra.Command, dir string, cf *configFlags) (*config.Config, *replay.Prepared, error) {
	var clash []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "run", "hash", "json", "cpuprofile":
		default:
			clash = append(clash, "--"+f.Name)
		}
	})
	if len(clash) > 0 {
		return nil, nil, usageError{Err: fmt.Errorf("--run takes the configuration, host mapping and trace from %s: drop %s", filepath.Join(dir, records.RunFile), strings.Join(clash, ", "))}
	}
	run, err := records.ReadRun(dir)
	if err != nil && !errors.Is(err, records.ErrIncomplete) {
		return nil, nil, classifyInput(err)
	}
	if err != nil {
		return nil, nil, inputError{Err: fmt.Errorf("--run %s: the run did not complete", dir)}
	}
	name := filepath.Join(dir, records.RunFile)
	if len(run.Options.Traces) == 0 {
		return nil, nil, inputError{Err: fmt.Errorf("%s does not record its inputs (an older replay wrote it): use --trace and the run's flags", name)}
	}
	cfg, _, err := config.Parse(run.Config, name, nil)
	if err != nil {
		return nil, nil, configError(err)
	}
	if cf.hash != "" && cf.hash != "all" {
		m, err := ecmp.ParseMethod(cf.hash)
		if err != nil {
			return nil, nil, usageError{Err: fmt.Errorf("--hash %q: want one of %v, or all", cf.hash, ecmp.AllMethods)}
		}
		cfg.SetHashMethod(m)
	}
	opt, err := replay.OptionsFromRun(&run.Options)
	if err != nil {
		return nil, nil, replayError(fmt.Errorf("%s: %w", name, err))
	}
	for _, t := range opt.Traces {
		if t == "-" {
			return nil, nil, inputError{Err: fmt.Errorf("%s: the run read its capture from standard input; map its endpoints with --trace FILE and the run's flags", name)}
		}
	}
	opt.Config, opt.Context = cfg, cmd.Context()
	pr, err := replay.PrepareMapping(opt)
	if err != nil {
		return nil, nil, replayError(fmt.Errorf("%s: %w", name, err))
	}
	return cfg, pr, nil
}

// mappedHosts names the hosts src and dst map to ("" when unmapped), in order.
func mappedHosts(hm *replay.HostMap, addrs ...netip.Addr) [][2]string {
	var out [][2]string
	for _, a := range addrs {
		h := ""
		if id, ok := hm.Host(ipaddr.FromNetip(a)); ok {
			h = hm.Names.HostName(id)
		}
		out = append(out, [2]string{a.String(), h})
	}
	return out
}

func parseTuple(args []string) (src, dst netip.Addr, proto uint8, sport, dport uint16, err error) {
	if src, err = netip.ParseAddr(args[0]); err != nil || src.Zone() != "" {
		return src, dst, 0, 0, 0, fmt.Errorf("SRC %q: want an IPv4 or IPv6 address", args[0])
	}
	if dst, err = netip.ParseAddr(args[1]); err != nil || dst.Zone() != "" {
		return src, dst, 0, 0, 0, fmt.Errorf("DST %q: want an IPv4 or IPv6 address", args[1])
	}
	if src.Is4() != dst.Is4() {
		return src, dst, 0, 0, 0, fmt.Errorf("SRC %s and DST %s: want two addresses of one family (IPv4 or IPv6)", src, dst)
	}
	switch strings.ToLower(args[2]) {
	case "tcp":
		proto = 6
	case "udp":
		proto = 17
	case "icmp":
		proto = 1
	case "icmpv6", "ipv6-icmp":
		proto = 58
	default:
		n, perr := strconv.ParseUint(args[2], 0, 8)
		if perr != nil {
			return src, dst, 0, 0, 0, fmt.Errorf("PROTO %q: want tcp, udp, icmp, icmpv6 or a number 0..255", args[2])
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

func printPathJSON(w io.Writer, hosts [][2]string, results map[string][]replay.PathHop, methods []ecmp.Method, all bool) error {
	hm := map[string]string{}
	for _, h := range hosts {
		hm[h[0]] = h[1]
	}
	v := map[string]any{"hosts": hm}
	if all {
		m := map[string]any{}
		for name, hops := range results {
			m[name] = map[string]any{"hops": hops}
		}
		v["methods"] = m
	} else {
		v["hops"] = results[methods[0].String()]
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func printPathText(w io.Writer, hosts [][2]string, results map[string][]replay.PathHop, methods []ecmp.Method) error {
	for _, h := range hosts {
		fmt.Fprintf(w, "%s -> %s\n", h[0], h[1])
	}
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
			set := strconv.Itoa(h.SetSize)
			if len(h.Weights) > 0 { // WCMP: the members' weights
				ws := make([]string, len(h.Weights))
				for i, w := range h.Weights {
					ws[i] = strconv.Itoa(int(w))
				}
				set += " (weights " + strings.Join(ws, ":") + ")"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%s\n", h.Node, set, hash, h.Member, h.Port, h.Next)
		}
	}
	return tw.Flush()
}
