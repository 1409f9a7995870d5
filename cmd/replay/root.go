package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// subcommands builds every subcommand of replay; a new subcommand is one file with a
// newXxxCmd function and one line here.
var subcommands = []func() *cobra.Command{
	newInspectCmd,
	newRunCmd,
	newConfigCmd,
	newPathCmd,
	newExportCmd,
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "replay",
		Short: "Replay packet captures through a simulated data-center Clos fabric",
		Long: `replay takes packet captures (pcap, pcapng, optionally gzip-compressed) through a
simulated Clos fabric of shared-buffer switches and records what happened.

Subcommands:
  run       replay captures through the simulated Clos; write Arrow records + run.json
  inspect   summarize captures: packets, flows, DSCP/ECN histograms, duration, rate
  config    print the effective configuration (YAML), validated
  path      show the hops and ECMP choices of one flow
  export    write a run's record files as Parquet or CSV

Exit status: 0 success, 1 failure while running, 2 bad usage or input.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
				if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
					msg += fmt.Sprintf("; did you mean %q?", sug[0])
				}
				return usageError{Err: errors.New(msg)}
			}
			return nil
		},
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		SilenceErrors: true,
		SilenceUsage:  true,
		// No completion subcommand: the command set is the product's (SPEC 8).
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{Err: err} })
	for _, mk := range subcommands {
		root.AddCommand(mk())
	}
	return root
}

// minArgs is cobra's MinimumNArgs returning a usage error.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MinimumNArgs(n)(cmd, args); err != nil {
			return usageError{Err: err}
		}
		return nil
	}
}
