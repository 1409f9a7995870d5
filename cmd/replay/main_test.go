package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// demo is the committed demo trace, relative to this package's directory.
var demo = filepath.Join("..", "..", "testdata", "pcaps", "demo.pcap")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with go test ./cmd/replay -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test ./cmd/replay -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestInspectGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"inspect-demo.json", []string{"inspect", "--json", demo}},
		{"inspect-demo.txt", []string{"inspect", demo}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(c.args...)
			if code != exitOK || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			golden(t, c.name, []byte(out))
		})
	}
}

// TestInspectJSONKeys pins the JSON contract of issues 2 and 16 and the demo trace's
// mix (IPv4 only: by_family.ipv6 is all zero).
func TestInspectJSONKeys(t *testing.T) {
	code, out, errs := runCmd("inspect", "--json", demo)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	want := []string{"packets", "ipv4_packets", "ipv6_packets", "non_ip_packets", "skipped", "flows", "endpoints",
		"dscp", "ecn", "by_family", "first_ts", "last_ts", "duration_s", "bytes", "mean_rate_bps", "files"}
	if len(m) != len(want) {
		t.Errorf("%d keys, want %d: %s", len(m), len(want), out)
	}
	for _, k := range want {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	type family struct {
		Packets, Flows int64
		DSCP, ECN      map[string]int64
	}
	var s struct {
		Packets   int64
		Flows     int64
		DSCP      map[string]int64
		ECN       map[string]int64
		Endpoints int64
		Files     []struct{ Format string }
		ByFamily  struct{ IPv4, IPv6 family } `json:"by_family"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	var ipv4 int64
	if err := json.Unmarshal(m["ipv4_packets"], &ipv4); err != nil {
		t.Fatal(err)
	}
	if s.Packets == 0 || ipv4 != s.Packets || s.DSCP["26"] == 0 || s.DSCP["0"] == 0 || s.DSCP["46"] == 0 ||
		s.ECN["2"] == 0 || s.Endpoints != 128 || len(s.Files) != 1 || s.Files[0].Format != "pcap" {
		t.Errorf("demo summary: %s", out)
	}
	v4, v6 := s.ByFamily.IPv4, s.ByFamily.IPv6
	if v4.Packets != s.Packets || v4.Flows != s.Flows || !reflect.DeepEqual(v4.DSCP, s.DSCP) || !reflect.DeepEqual(v4.ECN, s.ECN) ||
		v6.Packets != 0 || v6.Flows != 0 || len(v6.DSCP) != 0 || !reflect.DeepEqual(v6.ECN, map[string]int64{"0": 0, "1": 0, "2": 0, "3": 0}) {
		t.Errorf("by_family %+v, want ipv4 = the totals, ipv6 empty", s.ByFamily)
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.pcap")
	if err := os.WriteFile(corrupt, []byte("this is not a capture file at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A valid pcap header followed by a record that claims 1 GiB.
	lying := filepath.Join(dir, "lying.pcap")
	hdr := []byte{0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0x40}
	if err := os.WriteFile(lying, hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		args    []string
		code    int
		errPart string // in the one stderr line
	}{
		{"ok", []string{"inspect", demo}, exitOK, ""},
		{"bad flag", []string{"inspect", "--bogus", demo}, exitUsage, "unknown flag: --bogus"},
		{"bad flag value", []string{"inspect", "--reorder-window", "soon", demo}, exitUsage, `--reorder-window "soon": want a duration with a unit`},
		{"no trace", []string{"inspect"}, exitUsage, "missing TRACE: the captures to summarize"},
		{"unknown command", []string{"inspekt", demo}, exitUsage, `unknown command "inspekt"`},
		{"missing file", []string{"inspect", filepath.Join(dir, "nope.pcap")}, exitUsage, "nope.pcap"},
		{"directory", []string{"inspect", dir}, exitUsage, dir},
		{"corrupt file", []string{"inspect", corrupt}, exitUsage, "corrupt.pcap"},
		{"lying record length", []string{"inspect", "--json", lying}, exitUsage, "lying.pcap"},
		{"one bad of two", []string{"inspect", demo, corrupt}, exitUsage, "corrupt.pcap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errs)
			}
			if c.code == exitOK {
				if errs != "" || out == "" {
					t.Fatalf("stdout %d bytes, stderr %q", len(out), errs)
				}
				return
			}
			if strings.Count(errs, "\n") != 1 || !strings.HasSuffix(errs, "\n") || !strings.Contains(errs, c.errPart) ||
				!strings.HasPrefix(errs, "replay") {
				t.Errorf("stderr %q: want one line starting with replay and naming %q", errs, c.errPart)
			}
			if out != "" {
				t.Errorf("stdout %q on error", out)
			}
		})
	}
}

// errWriter fails every write, like a closed pipe.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("write /dev/stdout: broken pipe") }

func TestExitFailureOnOutputError(t *testing.T) {
	for _, args := range [][]string{{"inspect", demo}, {"inspect", "--json", demo}} {
		var errb bytes.Buffer
		if code := run(args, errWriter{}, &errb); code != exitFailure {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitFailure, errb.String())
		}
		if !strings.Contains(errb.String(), "broken pipe") || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: stderr %q", args, errb.String())
		}
	}
}

func TestRootUsageNamesSubcommands(t *testing.T) {
	for _, args := range [][]string{nil, {"--help"}} {
		code, out, errs := runCmd(args...)
		if code != exitOK || errs != "" || !strings.Contains(out, "inspect") || !strings.Contains(out, "Usage:") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// --cpuprofile writes a complete pprof file (gzip-compressed protobuf) whether the
// command succeeds or fails; an unwritable path is a usage error.
func TestCPUProfileFlag(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"ok", []string{"inspect", demo}, exitOK},
		{"failing command", []string{"inspect", filepath.Join(dir, "missing.pcap")}, exitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			prof := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".prof")
			code, _, errs := runCmd(append([]string{"--cpuprofile", prof}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, c.code, errs)
			}
			data, err := os.ReadFile(prof)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) < 20 || data[0] != 0x1f || data[1] != 0x8b {
				t.Fatalf("profile of %d bytes is not gzip-compressed pprof data", len(data))
			}
		})
	}
	code, _, errs := runCmd("inspect", demo, "--cpuprofile", filepath.Join(dir, "no", "such", "dir", "x.prof"))
	if code != exitUsage || !strings.Contains(errs, "--cpuprofile") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want exit 2 and one line naming --cpuprofile", code, errs)
	}
}
