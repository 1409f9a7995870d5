package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tracefabric/tracefabric/cmd/internal/cli"

	"github.com/tracefabric/tracefabric/ingest"
)

func newInspectCmd() *cobra.Command {
	var (
		asJSON bool
		tf     traceFlags
	)
	cmd := &cobra.Command{
		Use:   "inspect [flags] TRACE...",
		Short: "Summarize captures: packets, flows, DSCP/ECN histograms, duration, rate",
		Long: `inspect reads the captures (pcap or pcapng, plain or compressed with gzip, bzip2,
xz or zstd, merged by timestamp; "-" reads standard input) and prints a summary of
all of them and of each file: packets, IPv4 and IPv6 packets and their flows, other
packets, skipped packets by reason (multicast: IP packets a replay does not
simulate), distinct 5-tuple flows, endpoints, DSCP and ECN histograms of the IP
packets, first and last timestamp, duration, bytes (sum of the packets' IP lengths)
and mean rate. --json prints the same as one JSON object, with by_family: each
family's packets, flows and DSCP and ECN histograms. --start and --duration summarize
a window and --family one address family, as 'replay run' would replay them.`,
		Example: `  replay inspect testdata/pcaps/demo.pcap
  replay inspect --json a.pcapng b.pcap.xz
  replay inspect --start 2024-05-01T12:00:00Z --duration 1min week.pcap
  replay inspect --family ipv6 --json dual-stack.pcap`,
		Args: cli.AtLeastOne("TRACE", "the captures to summarize"),
		RunE: func(cmd *cobra.Command, args []string) error {
			stderr := cmd.ErrOrStderr()
			stdin, err := openStdin(args, os.Stdin)
			if err != nil {
				return err
			}
			opt, err := tf.options(stdin)
			if err != nil {
				return err
			}
			opt.Warn = func(msg string) { fmt.Fprintf(stderr, "%s: warning: %s\n", cmd.CommandPath(), msg) }
			opt.Context = cmd.Context()
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
	tf.register(cmd, false)
	tf.registerFamily(cmd)
	return cmd
}
