package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMessages pins, word for word, the one-line messages and exit statuses of the
// replay-side cases of issue 25 (item 8): each names the flag, argument or attribute
// and says what to do, in the user's terms.
func TestMessages(t *testing.T) {
	dir := t.TempDir()
	sweepFile := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(sweepFile, []byte("axes: {speedup: [1, 2]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"--speedup 2x", []string{"run", "--speedup", "2x", demo, "-o", out}, exitUsage,
			`replay run: --speedup "2x": want a number > 0, without a unit (--speedup 2 replays twice as fast) (see 'replay run --help')`},
		{"--reorder-window 10", []string{"inspect", "--reorder-window", "10", demo}, exitUsage,
			`replay inspect: --reorder-window "10": want a duration with a unit, such as 10ms or 1s (negative: off) (see 'replay inspect --help')`},
		{"export of a capture", []string{"export", demo}, exitUsage,
			"replay export: " + demo + " is a capture, not a run directory: replay it first (replay run " + demo + " -o DIR), then replay export DIR"},
		{"export of a missing path", []string{"export", filepath.Join(dir, "nope")}, exitUsage,
			"replay export: " + filepath.Join(dir, "nope") + ": no such file or directory (want the directory replay run wrote)"},
		{"path with one address", []string{"path", "10.0.0.1"}, exitUsage,
			"replay path: missing DST, PROTO, SPORT and DPORT: want SRC DST PROTO SPORT DPORT, e.g. replay path 10.0.0.1 10.0.4.1 udp 1000 4791 (see 'replay path --help')"},
		{"sweep without a trace", []string{"sweep", "-c", sweepFile}, exitUsage,
			"replay sweep: missing TRACE: the captures every point replays, e.g. replay sweep -c sweep.yaml testdata/pcaps/demo.pcap -o out/sweep (see 'replay sweep --help')"},
		{"--set Foo=1", []string{"run", "--set", "Foo=1", demo, "-o", out}, exitUsage,
			"replay run: --set: Foo: unknown attribute (replay config --defaults prints every attribute)"},
		{"--set Xonn=1", []string{"run", "--set", "Xonn=1", demo, "-o", out}, exitUsage,
			"replay run: --set: Xonn: unknown attribute (did you mean Xon?)"},
		{"--transport dctcp", []string{"run", "--transport", "dctcp", demo, "-o", out}, exitUsage,
			`replay run: --transport "dctcp": want open or closed; dctcp is a closed-loop TCP sender, chosen by Transport.Tcp: --transport closed --set Transport.Tcp=dctcp (see 'replay run --help')`},
		{"too small a buffer", []string{"run", "--set", "BufferSize=1MiB", demo, "-o", out}, exitUsage,
			"replay run: --set: Switch.BufferSize: over-committed buffer: the headroom alone, 4720640 B (20 ports x 1 lossless pools), exceeds BufferSize 1MiB (1048576 B); the pools and all headroom must fit in the buffer (on rack and fabric switches); the smallest BufferSize that fits every switch, with at least one cell in each pool, is 4721280 B (5MiB rounds it up to whole MiB)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(c.args...)
			if code != c.code || stderr != c.want+"\n" || stdout != "" {
				t.Errorf("exit %d (want %d), stdout %q\nstderr %q\nwant   %q", code, c.code, stdout, stderr, c.want+"\n")
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}
