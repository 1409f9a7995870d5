package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tracefabric/tracefabric/cmd/internal/cli"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/replay"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// version is the tool version recorded in run.json.
const version = cli.Version

// configFlags are the flags that shape the effective configuration (run, config, path).
type configFlags struct {
	file      string
	topology  string
	sets      []string
	seed      int64
	hash      string
	lb        string
	transport string
}

func (f *configFlags) register(cmd *cobra.Command, withHash bool) {
	cmd.Flags().StringVarP(&f.file, "config", "c", "", "YAML configuration file (default: the built-in defaults; see 'replay config --defaults')")
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "override one attribute, e.g. --set BufferSize=16MiB or --set Topology.Pods=1 (repeatable)")
	cmd.Flags().StringVar(&f.topology, "topology", "", "topology file `FILE`: a YAML topology or an ns-3 HPCC topology.txt, see docs/topology.md (Topology.File attribute)")
	cmd.Flags().Int64Var(&f.seed, "seed", 1, "the run's seed (Seed attribute)")
	cmd.Flags().StringVar(&f.lb, "lb", "", "load balancing: none or flowlet (LoadBalancingMethod attribute)")
	cmd.Flags().StringVar(&f.transport, "transport", "", "open (captured packets at their captured times, the default) or closed (TCP and RoCEv2 flows re-sent by simulated senders) (Transport.Mode attribute)")
	if withHash {
		cmd.Flags().StringVar(&f.hash, "hash", "", "ECMP hash method: crc32, crc32WithSalt, crc16, crc16Ccitt, xor16, toeplitz, or all (EcmpHashMethod attribute)")
	}
}

// load returns the effective configuration and prints its warnings; "all" as hash
// leaves the method alone. --lb and --hash are checked here, so that their errors
// speak of the flags.
func (f *configFlags) load(cmd *cobra.Command) (*config.Config, error) {
	sets := append([]string(nil), f.sets...)
	if f.topology != "" {
		sets = append(sets, "Topology.File="+strconv.Quote(f.topology))
	}
	if cmd.Flags().Changed("seed") {
		sets = append(sets, "Seed="+strconv.FormatInt(f.seed, 10))
	}
	if f.lb != "" {
		if _, err := ecmp.ParseLoadBalancing(f.lb); err != nil {
			return nil, usageError{Err: fmt.Errorf("--lb %q: want none or flowlet", f.lb)}
		}
		sets = append(sets, "LoadBalancingMethod="+f.lb)
	}
	if f.transport != "" {
		if _, err := config.ParseTransportMode(f.transport); err != nil {
			return nil, usageError{Err: fmt.Errorf("--transport %q: %s", f.transport, config.WantTransportMode(f.transport))}
		}
		sets = append(sets, "Transport.Mode="+f.transport)
	}
	if f.hash != "" && f.hash != "all" {
		if _, err := ecmp.ParseMethod(f.hash); err != nil {
			var names []string
			for _, m := range ecmp.AllMethods {
				names = append(names, m.String())
			}
			return nil, usageError{Err: fmt.Errorf("--hash %q: want %s, or all", f.hash, strings.Join(names, ", "))}
		}
		sets = append(sets, "EcmpHashMethod="+f.hash)
	}
	cfg, warns, err := config.Load(f.file, sets)
	if err != nil {
		return nil, configError(err)
	}
	warn := warnFunc(cmd)
	for _, w := range warns {
		warn(w)
	}
	return cfg, nil
}

// configError classifies configuration problems as input errors (exit 2).
func configError(err error) error {
	if errors.Is(err, config.ErrInvalid) || errors.Is(err, config.ErrSyntax) {
		return inputError{Err: err}
	}
	return classifyInput(err)
}

// replayError classifies replay's errors: bad inputs exit 2, the rest 1.
func replayError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, replay.ErrInput) || errors.Is(err, config.ErrInvalid) {
		return inputError{Err: err}
	}
	return classifyInput(err)
}

// isTerminal reports whether w is a terminal (progress bars only then).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func warnFunc(cmd *cobra.Command) func(string) {
	stderr := cmd.ErrOrStderr()
	return func(msg string) { fmt.Fprintf(stderr, "%s: warning: %s\n", cmd.CommandPath(), msg) }
}
