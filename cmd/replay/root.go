package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/tracefabric/tracefabric/cmd/internal/cli"
)

// subcommands builds every subcommand of replay; a new subcommand is one file with a
// newXxxCmd function and one line here.
var subcommands = []func() *cobra.Command{
	newInspectCmd,
	newRunCmd,
	newConfigCmd,
	newPathCmd,
	newTopologyCmd,
	newExportCmd,
	newSweepCmd,
	cli.NewVersionCmd,
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "replay",
		Short: "Replay packet captures through a simulated data-center Clos fabric",
		Long: `replay takes packet captures (pcap or pcapng, plain or compressed with gzip, bzip2,
xz or zstd) through a simulated Clos fabric of shared-buffer switches and records
what happened.

Exit status: 0 success, 1 failure while running, 2 bad usage or input,
130 interrupted (Ctrl-C or SIGTERM; partial outputs are removed), and
3 for 'replay sweep --status' of a sweep that is not complete.`,
	}
	for _, mk := range subcommands {
		root.AddCommand(mk())
	}
	cli.SetupRoot(root, stdout, stderr)
	return root
}

// The argument checks of replay's subcommands: cobra's, returning usage errors.
var (
	noArgs  = cli.NoArgs
	maxArgs = cli.MaximumArgs
)
