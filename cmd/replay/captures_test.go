package main

// The command-line side of issue 13: errors in the user's terms, compressed captures
// and standard input, --strict, multicast, windows and --max-idle, path --run, help.

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// pcapOf writes packets (times since 2024-05-01T12:00:00Z) as a nanosecond pcap.
func pcapOf(t *testing.T, pkts []tracegen.Packet) []byte {
	t.Helper()
	enc, err := tracegen.NewEncoder(tracegen.DefaultSnaplen)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := pcapgo.NewWriterNanos(&b)
	if err := w.WriteFileHeader(uint32(enc.Snaplen()), layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	epoch := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for i := range pkts {
		data, wire, err := enc.Encode(&pkts[i])
		if err != nil {
			t.Fatal(err)
		}
		ci := gopacket.CaptureInfo{Timestamp: epoch.Add(time.Duration(pkts[i].Time / units.Nanosecond)), CaptureLength: len(data), Length: wire}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func udp(at units.Time, src, dst string) tracegen.Packet {
	return tracegen.Packet{Time: at, Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst),
		Proto: layers.IPProtocolUDP, SrcPort: 1000, DstPort: 4791, Length: 200}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Errors are one line in the user's terms: the flags they typed, no package names,
// no repetition.
func TestErrorWording(t *testing.T) {
	dir := t.TempDir()
	// The packet at 50 ms comes after the one at 100 ms was read: 50 ms late, beyond
	// the 10 ms reorder window.
	late := writeFile(t, "late.pcap", pcapOf(t, []tracegen.Packet{udp(0, "10.0.0.1", "10.0.1.1"),
		udp(100*units.Millisecond, "10.0.0.1", "10.0.1.1"), udp(200*units.Millisecond, "10.0.0.1", "10.0.1.1"),
		udp(50*units.Millisecond, "10.0.0.1", "10.0.1.1")}))
	cases := []struct {
		name string
		args []string
		code int
		want string
		not  []string
	}{
		{"--lb ecmp", []string{"config", "--lb", "ecmp"}, exitUsage, `replay config: --lb "ecmp": want none or flowlet`, []string{"--set", "LoadBalancingMethod", "ecmp:"}},
		{"--hash md5", []string{"run", demo, "-o", filepath.Join(dir, "a"), "--hash", "md5"}, exitUsage, `--hash "md5": want crc32, crc32WithSalt, crc16, crc16Ccitt, xor16, toeplitz, or all`, []string{"ecmp:", "--set", "EcmpHashMethod"}},
		{"missing capture", []string{"inspect", filepath.Join(dir, "nope.pcap")}, exitUsage, "nope.pcap: no such file or directory", []string{"ingest", "open "}},
		{"unwritable -o", []string{"run", demo, "-o", "/proc/nope"}, exitUsage, "replay run: -o /proc/nope: cannot write in /proc (no such file or directory)", []string{"records", "output directory: output directory", "partial"}},
		{"--set Topology.Pod", []string{"config", "--set", "Topology.Pod=1"}, exitUsage, "did you mean Topology.Pods?", nil},
		{"config --hash all", []string{"config", "--hash", "all"}, exitUsage, "--hash all: config prints one configuration", nil},
		{"config --defaults ignores flags", []string{"config", "--defaults", "--set", "Pods=1"}, exitUsage, "drop --set", nil},
		{"--seed not an integer", []string{"config", "--seed", "abc"}, exitUsage, `--seed "abc": want an integer`, []string{"strconv", "invalid argument"}},
		{"late packet warning", []string{"inspect", late}, exitOK, "is 50 ms earlier than a packet already read, more than the reorder window 10 ms", []string{"replayed", "50ms"}},
		{"did you mean a subcommand", []string{"runn", demo}, exitUsage, `did you mean "run"?`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCmd(c.args...)
			if code != c.code || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d (want %d), stderr %q: want one line with %q", code, c.code, stderr, c.want)
			}
			for _, n := range append(c.not, "bad input", "ingest:", "records:", "replay: replay") {
				if strings.Contains(stderr, n) {
					t.Errorf("stderr %q says %q", stderr, n)
				}
			}
		})
	}
}

// Compressed captures are read by content; formats that are not read say what they
// are; "-" reads standard input, from a pipe or a file.
func TestCompressedCapturesAndStdin(t *testing.T) {
	dir := t.TempDir()
	for _, c := range tracegen.Compressions {
		path := filepath.Join(dir, "demo.pcap"+c.Ext())
		if err := tracegen.CompressFile(path, demo, c); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runCmd("inspect", "--json", path)
		if c == tracegen.LZ4 {
			if code != exitUsage || stderr != "replay inspect: "+path+": lz4 frame: not supported; decompress first (lz4 -d FILE)\n" {
				t.Errorf("lz4: exit %d, stderr %q", code, stderr)
			}
			continue
		}
		var s struct {
			IPv4  int64 `json:"ipv4_packets"`
			Files []struct{ Format string }
		}
		if code != exitOK || json.Unmarshal([]byte(out), &s) != nil || s.IPv4 != 22151 || s.Files[0].Format != "pcap+"+string(c) {
			t.Errorf("%s: exit %d, stderr %q, summary %+v", c, code, stderr, s)
		}
	}
	zst := filepath.Join(dir, "demo.pcap.zst")
	// Standard input as a pipe (copied to a temporary file: the replay reads it twice).
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(zst)
	go func() { w.Write(data); w.Close() }()
	saved := os.Stdin
	defer func() { os.Stdin = saved }()
	os.Stdin = r
	out := filepath.Join(dir, "piped")
	code, _, stderr := runCmd("run", "-", "-o", out, "-q")
	r.Close()
	if code != exitOK {
		t.Fatalf("run - (pipe): exit %d, %s", code, stderr)
	}
	run, err := records.ReadRun(out)
	if err != nil || run.Simulation.Injected != 22151 || run.Options.Traces[0] != "-" {
		t.Fatalf("run - (pipe): %v %+v", err, run)
	}
	// Standard input redirected from a file.
	f, err := os.Open(zst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	os.Stdin = f
	code, stdout, stderr := runCmd("inspect", "-")
	if code != exitOK || !strings.Contains(stdout, "IPv4 packets     22151 (632 flows)") || !strings.Contains(stdout, "pcap+zstd") {
		t.Errorf("inspect - (file): exit %d, %s%s", code, stdout, stderr)
	}
	if code, _, stderr := runCmd("inspect", "-", "-"); code != exitUsage || !strings.Contains(stderr, "more than once") {
		t.Errorf("- twice: exit %d, %q", code, stderr)
	}
}

// A capture that ends inside a packet: a warning and the packets before it, exit 0;
// with --strict an error, exit 2.
func TestStrict(t *testing.T) {
	full := pcapOf(t, []tracegen.Packet{udp(0, "10.0.0.1", "10.0.1.1"), udp(units.Microsecond, "10.0.0.1", "10.0.1.1"), udp(2*units.Microsecond, "10.0.0.1", "10.0.1.1")})
	cut := writeFile(t, "cut.pcap", full[:len(full)-20])
	code, stdout, stderr := runCmd("inspect", cut)
	if code != exitOK || !strings.Contains(stderr, "warning: "+cut+": packet 2") || !strings.Contains(stderr, "the packets before it are used") ||
		!strings.Contains(stdout, "IPv4 packets     2 (1 flow)") {
		t.Errorf("not strict: exit %d, stderr %q", code, stderr)
	}
	for _, args := range [][]string{{"inspect", "--strict", cut}, {"run", "--strict", cut, "-o", filepath.Join(t.TempDir(), "x")}} {
		code, _, stderr = runCmd(args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, cut+": packet 2 at byte offset") ||
			!strings.Contains(stderr, "the file ends inside this packet") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// Multicast and broadcast packets are shown by inspect and not replayed by run.
func TestMulticastCmd(t *testing.T) {
	trace := writeFile(t, "m.pcap", pcapOf(t, []tracegen.Packet{udp(0, "10.0.0.1", "224.0.0.251"),
		udp(units.Millisecond, "10.0.0.1", "10.0.1.1"), udp(2*units.Millisecond, "10.0.1.1", "255.255.255.255")}))
	code, stdout, _ := runCmd("inspect", trace)
	if code != exitOK || !strings.Contains(stdout, "skipped          multicast 2 (IP, not replayed)") || !strings.Contains(stdout, "IPv4 packets     3 (3 flows)") {
		t.Errorf("inspect: exit %d:\n%s", code, stdout)
	}
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCmd("run", trace, "-o", out, "-q")
	if code != exitOK || !strings.Contains(stderr, "1 IPv4 packet to replay (not replayed: 2 multicast), 1 flow, 2 endpoints -> 128 hosts") ||
		!strings.Contains(stdout, "injected 1 packet,") {
		t.Errorf("run: exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}
}

// --start/--duration and --max-idle on the command line, in run.json and inspect.
func TestWindowAndMaxIdleCmd(t *testing.T) {
	var pkts []tracegen.Packet
	for i := range 6 {
		pkts = append(pkts, udp(units.Time(i)*10*units.Second, "10.0.0.1", "10.0.1.1"))
	}
	trace := writeFile(t, "w.pcap", pcapOf(t, pkts))
	code, stdout, _ := runCmd("inspect", "--start", "2024-05-01T12:00:15Z", "--duration", "20s", trace)
	if code != exitOK || !strings.Contains(stdout, "IPv4 packets     2 (1 flow)") || !strings.Contains(stdout, "out-of-window 4") ||
		!strings.Contains(stdout, "window           2024-05-01T12:00:15.000000000Z .. 2024-05-01T12:00:35.000000000Z") ||
		!strings.Contains(stdout, "duration         10 s") {
		t.Errorf("inspect window: exit %d\n%s", code, stdout)
	}
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCmd("run", trace, "-o", out, "-q", "--start", "10s", "--max-idle", "1s", "--json")
	if code != exitOK || !strings.Contains(stderr, "--max-idle shortened 4 idle gaps, removing 36 s") {
		t.Fatalf("run: exit %d, %s", code, stderr)
	}
	run, err := records.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Skipped  map[string]int64 `json:"skipped"`
		IdleGaps struct {
			Shortened int64   `json:"shortened"`
			RemovedS  float64 `json:"removed_s"`
		} `json:"idle_gaps"`
	}
	json.Unmarshal(run.Trace, &tr)
	if tr.Skipped["out-of-window"] != 1 || tr.IdleGaps.Shortened != 4 || tr.IdleGaps.RemovedS != 36 || run.Simulation.SimTimePs < 4e12 || run.Simulation.SimTimePs > 6e12 {
		t.Errorf("run.json: %+v, sim time %d ps", tr, run.Simulation.SimTimePs)
	}
}

// path --run maps addresses as the run did (its host mapping, here hash, from
// run.json): the hosts path prints are the hosts flows.arrow recorded.
func TestPathRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runCmd("run", demo, "-o", out, "-q", "--hosts", "hash", "--seed", "7"); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	flows, nodes, err := records.ReadAll(records.OpenFlows(filepath.Join(out, records.FlowsFile)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []records.FlowRow{flows[0], flows[len(flows)/2], flows[len(flows)-1]} {
		src, dst := f.Src.String(), f.Dst.String()
		proto := map[uint8]string{6: "tcp", 17: "udp"}[f.Proto]
		code, stdout, stderr := runCmd("path", "--run", out, src, dst, proto, itoa(int(f.Sport)), itoa(int(f.Dport)))
		if code != exitOK {
			t.Fatalf("path --run: exit %d: %s", code, stderr)
		}
		want := src + " -> " + nodes[f.SrcHost] + "\n" + dst + " -> " + nodes[f.DstHost] + "\n"
		if !strings.HasPrefix(stdout, want) || !strings.Contains(stdout, nodes[f.SrcHost]+"  ") {
			t.Errorf("path --run:\n%s\nwant it to start with\n%s", stdout, want)
		}
	}
	code, _, stderr := runCmd("path", "--run", out, "--set", "Pods=1", "10.0.0.1", "10.0.1.1", "udp", "1", "2")
	if code != exitUsage || !strings.Contains(stderr, "drop --set") {
		t.Errorf("--run with --set: exit %d %q", code, stderr)
	}
	// JSON names the hosts too.
	f := flows[0]
	src, dst := f.Src.String(), f.Dst.String()
	code, stdout, _ := runCmd("path", "--run", out, "--json", src, dst, map[uint8]string{6: "tcp", 17: "udp"}[f.Proto], itoa(int(f.Sport)), itoa(int(f.Dport)))
	var js struct{ Hosts map[string]string }
	if code != exitOK || json.Unmarshal([]byte(stdout), &js) != nil || js.Hosts[src] != nodes[f.SrcHost] || js.Hosts[dst] != nodes[f.DstHost] {
		t.Errorf("path --run --json: %s", stdout)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// Each command lists its subcommands once; usage lines carry [flags] once; --seed
// is an integer flag.
func TestHelp(t *testing.T) {
	_, out, _ := runCmd("--help")
	for _, sub := range []string{"run", "inspect", "config", "path", "version", "completion"} {
		if n := len(regexp.MustCompile(`(?m)^\s+`+sub+`\s`).FindAllString(out, -1)); n != 1 {
			t.Errorf("replay --help lists %s %d times:\n%s", sub, n, out)
		}
	}
	for _, sub := range []string{"run", "inspect", "config", "path"} {
		_, out, _ := runCmd(sub, "--help")
		usage := regexp.MustCompile(`(?m)^  replay ` + sub + `.*$`).FindString(out)
		if strings.Count(usage, "[flags]") != 1 {
			t.Errorf("%s usage line %q", sub, usage)
		}
		if sub != "inspect" && !strings.Contains(out, "--seed int") {
			t.Errorf("%s --help: --seed is not an integer flag", sub)
		}
	}
}

// Every flag of every subcommand is in the README.
func TestReadmeListsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		if c.Name() == "completion" || c.Name() == "help" {
			return
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			if !bytes.Contains(readme, []byte("`--"+f.Name)) && !bytes.Contains(readme, []byte("`-"+f.Shorthand+" ")) ||
				(f.Shorthand != "" && !bytes.Contains(readme, []byte("`-"+f.Shorthand))) {
				t.Errorf("README does not list %s's flag --%s (-%s)", c.CommandPath(), f.Name, f.Shorthand)
			}
		})
		for _, s := range c.Commands() {
			visit(s)
		}
	}
	visit(newRootCmd(&bytes.Buffer{}, &bytes.Buffer{}))
}

// Re-running into a run directory that holds an analysis replaces both, and says so
// in one line.
func TestRerunReplacesAnalysis(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	if code, _, stderr := runCmd("run", demo, "-o", out, "-q"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	analysis := filepath.Join(out, records.AnalysisDir)
	os.MkdirAll(analysis, 0o755)
	os.WriteFile(filepath.Join(analysis, records.AnalysisSummaryFile), []byte("{}"), 0o644)
	code, _, stderr := runCmd("run", demo, "-o", out, "-q")
	want := "replay run: note: replaced the previous run in " + out + ", with the analysis/ analyze wrote for it (run analyze again)\n"
	if code != exitOK || !strings.HasSuffix(stderr, want) || strings.Count(stderr, "\n") != 2 {
		t.Errorf("exit %d, stderr %q; want it to end with %q", code, stderr, want)
	}
	if _, err := os.Stat(analysis); !os.IsNotExist(err) {
		t.Errorf("the old analysis survived (%v)", err)
	}
	// Without a previous analysis, no note.
	code, _, stderr = runCmd("run", demo, "-o", out, "-q")
	if code != exitOK || strings.Contains(stderr, "note:") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
