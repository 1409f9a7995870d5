package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/tracefabric/tracefabric/fabric"
	"github.com/tracefabric/tracefabric/internal/atomicfile"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/replay"
)

func newTopologyCmd() *cobra.Command {
	var (
		cf       configFlags
		svg, png string
		asJSON   bool
		threads  int
	)
	cmd := &cobra.Command{
		Use:   "topology [CONFIG | TOPOLOGY-FILE] [flags]",
		Short: "Validate and describe a fabric without a trace, and draw it",
		Long: `topology builds the fabric a run would simulate (the configuration's Clos, or its
Topology.File, or --topology), routes and validates it (every switch's profile and
buffer layout), and describes it: nodes and hosts per role, links per class,
oversubscription per role, bisection bandwidth, the longest path with its base RTT
and BDP, the headroom per port and the routing tables (docs/topology.md#describe).
--threads N adds how the parallel engine divides the fabric for N threads (0: the
CPUs the process may use): partitions, their nodes and work weight, the cut links,
the lookahead and the imbalance, or why it runs sequentially
(docs/topology.md#partitions-for-the-parallel-engine).
--svg and --png draw it by layers (hosts, leaves, spines, ...), line width by link
speed; the analyze report colours the same picture by utilization and drops.

The argument is a configuration file (as -c), or a topology file (a YAML topology
with Generator or Switches/Hosts/Links, or an HPCC topology.txt; as --topology).`,
		Example: `  replay topology
  replay topology --topology rail.yaml --svg rail.svg
  replay topology --threads 4
  replay topology fabric.yaml --set Switches.spine.BufferSize=1GiB`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cf.hash == "all" {
				return usageError{Err: errors.New("--hash all: topology describes one configuration")}
			}
			if len(args) == 1 {
				if isTopologyFile(args[0]) {
					if cf.topology != "" {
						return usageError{Err: fmt.Errorf("%s is a topology file: drop --topology %s", args[0], cf.topology)}
					}
					cf.topology = args[0]
				} else {
					if cf.file != "" {
						return usageError{Err: fmt.Errorf("the configuration is %s: drop -c %s", args[0], cf.file)}
					}
					cf.file = args[0]
				}
			}
			cfg, err := cf.load(cmd)
			if err != nil {
				return err
			}
			topo, err := replay.NewTopology(cfg)
			if err != nil {
				return inputError{Err: err}
			}
			d, err := topo.Describe(cfg)
			if err != nil {
				return inputError{Err: err}
			}
			var plan *fabric.PlanSummary
			if cmd.Flags().Changed("threads") {
				if threads < 0 {
					return usageError{Err: fmt.Errorf("--threads %d: want 1 or more (0: the CPUs the process may use)", threads)}
				}
				if threads == 0 {
					threads = runtime.GOMAXPROCS(0)
				}
				p, err := fabric.Partition(topo.Fabric, threads)
				if err != nil {
					return usageError{Err: fmt.Errorf("--threads: %w", err)}
				}
				s := p.Summary(topo.Fabric)
				plan = &s
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				err = enc.Encode(struct {
					*replay.Description
					Partitions *fabric.PlanSummary `json:"partitions,omitempty"`
				}{d, plan})
			} else {
				err = d.WriteText(out)
				if err == nil && plan != nil {
					_, err = io.WriteString(out, plan.Text())
				}
			}
			if err != nil {
				return err
			}
			if svg == "" && png == "" {
				return nil
			}
			fig, err := plots.FabricMap(topo.Picture(), nil, plots.Options{})
			if err != nil {
				return err
			}
			for _, w := range []struct {
				path   string
				format plots.Format
			}{{svg, plots.SVG}, {png, plots.PNG}} {
				if w.path == "" {
					continue
				}
				b, err := fig.Render(w.format)
				if err != nil {
					return err
				}
				if err := atomicfile.WriteFile(w.path, b); err != nil {
					return fmt.Errorf("--%s: %w", w.format, err)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&svg, "svg", "", "draw the fabric by layers into `FILE` (SVG)")
	f.StringVar(&png, "png", "", "draw the fabric by layers into `FILE` (PNG)")
	f.BoolVar(&asJSON, "json", false, "print the description as JSON")
	f.IntVar(&threads, "threads", 0, "also print how the parallel engine divides the fabric for `N` threads (0: the CPUs the process may use)")
	cf.register(cmd, true)
	return cmd
}

// isTopologyFile tells a topology file from a configuration file: an HPCC
// topology.txt, or YAML whose top level has Generator, Hosts or Links, or a
// Switches list (a configuration's Switches is a mapping of profiles).
func isTopologyFile(path string) bool {
	data, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return false
	}
	first, _, _ := bytes.Cut(bytes.TrimLeft(data, " \t\r\n"), []byte("\n"))
	var a, b, c int
	if n, _ := fmt.Sscanf(string(first), "%d %d %d", &a, &b, &c); n == 3 {
		return true
	}
	var top map[string]yaml.Node
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	if _, ok := top["Generator"]; ok {
		return true
	}
	if _, ok := top["Hosts"]; ok {
		return true
	}
	if _, ok := top["Links"]; ok {
		return true
	}
	if s, ok := top["Switches"]; ok && s.Kind == yaml.SequenceNode {
		return true
	}
	return false
}
