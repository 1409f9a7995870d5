package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracefabric/tracefabric/cmd/internal/cli"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/ingest/filter"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/replay"
)

// traceFlags are the flags that say how captures are read (run, inspect, path).
type traceFlags struct {
	reorder  time.Duration
	start    string
	duration string
	maxIdle  string
	strict   bool
	family   string
	filter   string
}

func (f *traceFlags) register(cmd *cobra.Command, withIdle bool) {
	fl := cmd.Flags()
	fl.DurationVar(&f.reorder, "reorder-window", 0, "put packets whose timestamps go backwards within a file in order within this window (default 10ms; negative: off)")
	cli.Want(fl, "reorder-window", "a duration with a unit, such as 10ms or 1s (negative: off)")
	fl.StringVar(&f.start, "start", "", "replay from `T`: an offset from the first packet (30s, 2h, 3d) or an RFC 3339 time (2024-05-01T12:00:00Z); earlier packets are counted out-of-window")
	fl.StringVar(&f.duration, "duration", "", "replay `D` of capture time from --start (or from the first packet); later packets are counted out-of-window")
	fl.BoolVar(&f.strict, "strict", false, "a capture that ends inside a packet is an error (exit 2) instead of a warning")
	if withIdle {
		fl.StringVar(&f.maxIdle, "max-idle", "", "shorten every idle gap of the merged capture longer than `G` (no packet at all) to G")
	}
}

// registerFamily adds the packet selections --family and --filter (run, inspect,
// sweep).
func (f *traceFlags) registerFamily(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.family, "family", "all", "use only the packets of this address family: ipv4, ipv6 or all (the rest are counted family-filtered)")
	cmd.Flags().StringVar(&f.filter, "filter", "", "use only the IP packets this tcpdump-style `EXPR` matches, e.g. 'tcp port 443 and net 10.0.0.0/8' (the rest are counted filtered; see docs/model.md#filters)")
}

// flt is --filter (nil: none).
func (f *traceFlags) flt() (*filter.Filter, error) {
	if strings.TrimSpace(f.filter) == "" {
		if f.filter != "" {
			return nil, usageError{Err: fmt.Errorf("--filter %q: empty expression (want a primitive such as tcp, host 10.0.0.1 or port 443)", f.filter)}
		}
		return nil, nil
	}
	flt, err := filter.Parse(f.filter)
	if err != nil {
		return nil, usageError{Err: fmt.Errorf("--filter %q: %w", f.filter, err)}
	}
	return flt, nil
}

// fam is --family (0: all; also without the flag).
func (f *traceFlags) fam() (ipaddr.Family, error) {
	if f.family == "" {
		return 0, nil
	}
	fam, err := ipaddr.ParseFamily(f.family)
	if err != nil {
		return 0, usageError{Err: fmt.Errorf("--family %q: want ipv4, ipv6 or all", f.family)}
	}
	return fam, nil
}

// window is the --start/--duration window.
func (f *traceFlags) window() (ingest.Window, error) {
	var w ingest.Window
	if f.start != "" {
		if t, err := time.Parse(time.RFC3339Nano, f.start); err == nil {
			w.Start, w.Absolute = t.UnixNano(), true
		} else if strings.Count(f.start, "-") >= 2 || strings.Contains(f.start, "T") {
			return w, usageError{Err: fmt.Errorf("--start %q: not an RFC 3339 time (want e.g. 2024-05-01T12:00:00Z): %w", f.start, errors.Unwrap(err))}
		} else {
			d, err := units.ParseSpan(f.start)
			if err != nil || d < 0 {
				return w, usageError{Err: fmt.Errorf("--start %q: want an offset from the first packet (30s, 1.5ms, 2h, 3d) or an RFC 3339 time", f.start)}
			}
			w.Start = int64(d)
		}
	}
	if f.duration != "" {
		d, err := units.ParseSpan(f.duration)
		if err != nil || d <= 0 {
			return w, usageError{Err: fmt.Errorf("--duration %q: want a duration > 0 (30s, 1.5ms, 2h, 3d)", f.duration)}
		}
		w.Duration = int64(d)
	}
	return w, nil
}

// idle is --max-idle (0: off).
func (f *traceFlags) idle() (time.Duration, error) {
	if f.maxIdle == "" {
		return 0, nil
	}
	d, err := units.ParseSpan(f.maxIdle)
	if err != nil || d <= 0 {
		return 0, usageError{Err: fmt.Errorf("--max-idle %q: want a duration > 0 (1s, 100ms, 1h)", f.maxIdle)}
	}
	return d, nil
}

// options are the ingest options of the flags (window included) with the given
// standard input.
func (f *traceFlags) options(stdin *os.File) (ingest.Options, error) {
	w, err := f.window()
	if err != nil {
		return ingest.Options{}, err
	}
	fam, err := f.fam()
	if err != nil {
		return ingest.Options{}, err
	}
	opt := ingest.Options{ReorderWindow: f.reorder, Window: w, Strict: f.strict, Stdin: stdin, Family: fam}
	flt, err := f.flt()
	if flt != nil {
		opt.Filter = flt
	}
	return opt, err
}

// openStdin returns standard input as a file that can be read more than once when
// a trace is "-" (nil otherwise): standard input itself when it is a regular file,
// else a copy in a temporary file that is already unlinked (nothing is left behind,
// whatever happens). "-" given twice is an error.
func openStdin(traces []string, in *os.File) (*os.File, error) {
	n := 0
	for _, t := range traces {
		if t == ingest.StdinPath {
			n++
		}
	}
	switch {
	case n == 0:
		return nil, nil
	case n > 1:
		return nil, usageError{Err: errors.New(`"-" (standard input) given more than once`)}
	}
	if fi, err := in.Stat(); err == nil && fi.Mode().IsRegular() {
		return in, nil
	}
	tmp, err := os.CreateTemp("", "replay-stdin-*")
	if err != nil {
		return nil, fmt.Errorf("standard input: cannot copy it to a temporary file: %w", err)
	}
	os.Remove(tmp.Name()) // the open file stays readable
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("standard input: %w", err)
	}
	return tmp, nil
}

// replayFlags are the options of a replay besides its configuration and speedup that
// `replay run` and `replay sweep` (for every point) share: host mapping, oversize,
// drain, packets.arrow and how the captures are read (sweepRunFlags names them).
type replayFlags struct {
	tf       traceFlags
	maxDrain string
	jitter   string
}

func (r *replayFlags) register(cmd *cobra.Command, opt *replay.Options) {
	f := cmd.Flags()
	f.StringVar(&opt.Hosts, "hosts", "subnet", "host mapping: subnet (by --rack-prefix groups, spilling to the next rack when full), spread (endpoints round-robin over the racks), hash, or a CSV file of cidr,host-name lines")
	f.IntVar(&opt.RackPrefix, "rack-prefix", 24, "subnet mapping: group IPv4 endpoints by this prefix length, one group per rack")
	f.IntVar(&opt.RackPrefix6, "rack-prefix6", 64, "subnet mapping: group IPv6 endpoints by this prefix length (IPv4 groups first, then IPv6, share the racks in turn)")
	f.StringVar(&opt.Oversize, "oversize", "split", "packets longer than the MTU: split into MTU-sized packets, or drop")
	f.StringVar(&r.maxDrain, "max-drain", "1s", "simulate at most this long after the last packet to drain the fabric")
	f.BoolVar(&opt.RecordPackets, "record-packets", false, "also write packets.arrow: one row per simulated packet with its path")
	f.StringVar(&r.jitter, "replicate-jitter", "", "--replicate: offset each copy by a seeded draw in [0, `D`) of capture time")
	r.tf.register(cmd, true)
	r.tf.registerFamily(cmd)
}

// apply checks the flags and sets the options they give.
func (r *replayFlags) apply(cmd *cobra.Command, opt *replay.Options) error {
	fl := cmd.Flags()
	if fl.Changed("rack-prefix") && (opt.RackPrefix < 0 || opt.RackPrefix > 32) {
		return usageError{Err: fmt.Errorf("--rack-prefix %d: want a prefix length 0..32", opt.RackPrefix)}
	}
	if fl.Changed("rack-prefix6") && (opt.RackPrefix6 < 0 || opt.RackPrefix6 > 128) {
		return usageError{Err: fmt.Errorf("--rack-prefix6 %d: want a prefix length 0..128", opt.RackPrefix6)}
	}
	if r.maxDrain != "" {
		d, err := units.ParseTime(r.maxDrain)
		if err != nil || d <= 0 {
			return usageError{Err: fmt.Errorf("--max-drain %q: want a duration > 0", r.maxDrain)}
		}
		opt.MaxDrain = d
	}
	if r.jitter != "" {
		d, err := units.ParseSpan(r.jitter)
		if err != nil || d < 0 {
			return usageError{Err: fmt.Errorf("--replicate-jitter %q: want a duration >= 0 (100us, 1ms)", r.jitter)}
		}
		opt.ReplicateJitter = d
	}
	var err error
	if opt.Window, err = r.tf.window(); err != nil {
		return err
	}
	if opt.MaxIdle, err = r.tf.idle(); err != nil {
		return err
	}
	if opt.Family, err = r.tf.fam(); err != nil {
		return err
	}
	if opt.Filter, err = r.tf.flt(); err != nil {
		return err
	}
	opt.ReorderWindow, opt.Strict = r.tf.reorder, r.tf.strict
	return nil
}
