package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracefabric/tracefabric/ingest"
)

func newInspectCmd() *cobra.Command {
	var (
		asJSON bool
		opt    ingest.Options
	)
	cmd := &cobra.Command{
		Use:   "inspect [--json] [--reorder-window 10ms] TRACE...",
		Short: "Summarize captures: packets, flows, DSCP/ECN histograms, duration, rate",
		Long: `inspect reads the captures (pcap or pcapng, optionally gzip-compressed, merged by
timestamp) and prints a summary of all of them and of each file: packets, IPv4
packets, skipped packets by reason, distinct 5-tuple flows, endpoints, DSCP and ECN
histograms of the IPv4 packets, first and last timestamp, duration, bytes (sum of
IPv4 total lengths) and mean rate. --json prints the same as one JSON object.`,
		Example: `  replay inspect testdata/pcaps/demo.pcap
  replay inspect --json a.pcapng b.pcap.gz`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			stderr := cmd.ErrOrStderr()
			opt.Warn = func(msg string) { fmt.Fprintf(stderr, "%s: warning: %s\n", cmd.CommandPath(), msg) }
			s, err := ingest.Summarize(args, opt)
			if err != nil {
				return classifyInput(err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, err := json.MarshalIndent(s, "", "  ")
				if err != nil {
					return err
				}
				_, err = out.Write(append(b, '\n'))
				return err
			}
			return s.WriteText(out)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as a JSON object")
	cmd.Flags().DurationVar(&opt.ReorderWindow, "reorder-window", ingest.DefaultReorderWindow,
		"put packets whose timestamps go backwards within a file in order within this window; negative: off")
	return cmd
}
