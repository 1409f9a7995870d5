package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracefabric/tracefabric/internal/config"
)

func newConfigCmd() *cobra.Command {
	var (
		cf       configFlags
		defaults bool
	)
	cmd := &cobra.Command{
		Use:   "config [flags]",
		Short: "Print the effective configuration as YAML, validated",
		Long: `config prints the configuration a run would use, as YAML with human units: the
built-in defaults, overridden by the -c file and the --set, --seed, --hash and --lb
flags, then validated (an invalid configuration is an error naming the attribute and
the rule). --defaults prints the built-in defaults alone. Save the output, edit it and
pass it back with -c.`,
		Example: `  replay config --defaults > fabric.yaml
  replay config -c fabric.yaml --set Topology.Pods=1 --hash crc16`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cf.hash == "all" {
				return usageError{Err: errors.New("--hash all: config prints one configuration; give one method (crc32, crc32WithSalt, crc16, crc16Ccitt, xor16, toeplitz)")}
			}
			if defaults {
				var ignored []string
				cmd.Flags().Visit(func(f *pflag.Flag) {
					if f.Name != "defaults" && f.Name != "cpuprofile" {
						ignored = append(ignored, "--"+f.Name)
					}
				})
				if len(ignored) > 0 {
					return usageError{Err: fmt.Errorf("--defaults prints the built-in defaults alone: drop %s", strings.Join(ignored, ", "))}
				}
			}
			var cfg *config.Config
			if defaults {
				d := config.Default()
				cfg = &d
			} else {
				c, err := cf.load(cmd)
				if err != nil {
					return err
				}
				cfg = c
			}
			b, err := cfg.YAML()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	cmd.Flags().BoolVar(&defaults, "defaults", false, "print the built-in defaults (alone: no other flag)")
	cf.register(cmd, true)
	cf.registerEvents(cmd)
	return cmd
}
