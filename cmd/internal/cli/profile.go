package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/cobra"
)

// CPUProfile adds the persistent flag --cpuprofile FILE to root: the command run
// writes a CPU profile (pprof format: go tool pprof FILE) of itself. Call the returned
// stop once the command has returned, whether it failed or not; it completes the file.
func CPUProfile(root *cobra.Command) (stop func() error) {
	var path string
	var f *os.File
	root.PersistentFlags().StringVar(&path, "cpuprofile", "", "write a CPU profile of the command (pprof format) to `FILE`")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if path == "" {
			return nil
		}
		var err error
		if f, err = os.Create(path); err != nil {
			return UsageError{Err: fmt.Errorf("--cpuprofile: %w", err)}
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			f = nil
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}
	return func() error {
		if f == nil {
			return nil
		}
		pprof.StopCPUProfile()
		err := f.Close()
		f = nil
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}
}

// Execute runs root on args (without the program name) the way both commands do:
// with the --cpuprofile flag, with SIGINT and SIGTERM cancelling the command's
// context (cmd.Context(): the command stops, removes its partial outputs and returns;
// a second signal kills the process), and with a failed command reported as one line
// on stderr naming the (sub)command. It returns the exit status (130 when a signal
// stopped the command).
func Execute(root *cobra.Command, args []string, stderr io.Writer) int {
	if args == nil {
		args = []string{} // cobra reads os.Args for nil
	}
	root.SetArgs(args)
	stopProfile := CPUProfile(root)
	ctx, stopSignals := notifyContext()
	cmd, err := root.ExecuteContextC(ctx)
	stopSignals()
	err = errors.Join(err, stopProfile())
	if err == nil {
		return ExitOK
	}
	var in Interrupted
	if cause := context.Cause(ctx); errors.As(cause, &in) {
		in.Outputs = cmd != nil && cmd.Annotations[WritesOutputs] != ""
		err = in // whatever the command returned on its way out
	}
	name := root.Name()
	if cmd != nil {
		name = cmd.CommandPath()
	}
	return Report(stderr, name, err)
}

// notifyContext returns a context cancelled, with an Interrupted cause, by the first
// SIGINT or SIGTERM; the signals' default action (ending the process) is restored
// then, so that a second Ctrl-C kills a command that does not stop. stop releases
// the signals.
func notifyContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			name := "SIGINT"
			if s == syscall.SIGTERM {
				name = "SIGTERM"
			}
			cancel(Interrupted{Signal: name})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}
