package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

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
// with the --cpuprofile flag, and with a failed command reported as one line on
// stderr naming the (sub)command. It returns the exit status.
func Execute(root *cobra.Command, args []string, stderr io.Writer) int {
	if args == nil {
		args = []string{} // cobra reads os.Args for nil
	}
	root.SetArgs(args)
	stopProfile := CPUProfile(root)
	cmd, err := root.ExecuteC()
	err = errors.Join(err, stopProfile())
	if err == nil {
		return ExitOK
	}
	name := root.Name()
	if cmd != nil {
		name = cmd.CommandPath()
	}
	return Report(stderr, name, err)
}
