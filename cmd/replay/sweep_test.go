package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	k8syaml "sigs.k8s.io/yaml"

	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/records"
)

// demoSweepFile is the 12-point sweep of the acceptance test: four hash methods
// times three buffer sizes around the demo trace's last drop (crc16 stops dropping
// at 112MiB, the others at 128MiB).
const demoSweepFile = `# hash x BufferSize over the demo trace
axes:
  hash: [crc32, crc16, xor16, crc32WithSalt]
  set:
    Switch.BufferSize: [64MiB, 112MiB, 128MiB]
`

var (
	demoSweepOnce sync.Once
	demoSweepDir  string // the local -j 2 sweep, shared by the tests that compare with it
	demoSweepYAML string
	demoSweepOut  string
	demoSweepTook time.Duration
)

// demoSweep runs the 12-point demo sweep in process once (-j 2) and returns its
// directory and sweep file.
func demoSweep(t *testing.T) (dir, file string) {
	t.Helper()
	demoSweepOnce.Do(func() {
		root, err := os.MkdirTemp(testRoot, "demo-sweep-")
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(root, "demo-sweep.yaml")
		if err := os.WriteFile(file, []byte(demoSweepFile), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(root, "local")
		start := time.Now()
		code, stdout, stderr := runCmd("sweep", "-c", file, demo, "-o", out, "-j", "2", "-q")
		demoSweepTook = time.Since(start)
		if code != exitOK {
			t.Fatalf("sweep: exit %d: %s", code, stderr)
		}
		demoSweepDir, demoSweepYAML, demoSweepOut = out, file, stdout
	})
	if demoSweepDir == "" {
		t.Fatal("the demo sweep failed earlier")
	}
	return demoSweepDir, demoSweepYAML
}

// The 12-point sweep of the demo trace: every point's run directory holds a
// complete run of its settings, numbered hash-major; sweep.json says complete.
func TestSweepDemo(t *testing.T) {
	dir, _ := demoSweep(t)
	t.Logf("12-point demo sweep, -j 2: %.2f s", demoSweepTook.Seconds())
	s, err := records.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Complete || len(s.Points) != 12 || s.Counts[records.StatusDone] != 12 {
		t.Fatalf("sweep.json: complete %v, %d points, counts %v", s.Complete, len(s.Points), s.Counts)
	}
	hashes := []string{"crc32", "crc16", "xor16", "crc32WithSalt"}
	sizes := []string{"64MiB", "112MiB", "128MiB"}
	var ingest struct{ Packets int64 }
	if err := json.Unmarshal(s.Trace, &ingest); err != nil || ingest.Packets != 22151 {
		t.Errorf("sweep.json trace: %s (%v)", s.Trace, err)
	}
	for k := range 12 {
		dirk := filepath.Join(dir, fmt.Sprintf("p%04d", k))
		run, err := records.ReadRun(dirk)
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct{ Switch struct{ BufferSize string } }
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			t.Fatal(err)
		}
		if run.HashMethod.String() != hashes[k/3] || cfg.Switch.BufferSize != sizes[k%3] {
			t.Errorf("p%04d: hash %s buffer %s, want %s %s", k, run.HashMethod, cfg.Switch.BufferSize, hashes[k/3], sizes[k%3])
		}
		if run.Simulation.Injected != 22151 {
			t.Errorf("p%04d: injected %d", k, run.Simulation.Injected)
		}
		want := fmt.Sprintf("p%04d [hash=%s Switch.BufferSize=%s]: dropped %d ", k, hashes[k/3], sizes[k%3], run.Simulation.DroppedTotal())
		if !strings.Contains(demoSweepOut, want) {
			t.Errorf("stdout lacks %q:\n%s", want, demoSweepOut)
		}
	}
	if !strings.Contains(demoSweepOut, "ran 12 points in") || !strings.Contains(demoSweepOut, "the sweep is complete") {
		t.Errorf("stdout:\n%s", demoSweepOut)
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  string
)

// replayBinary builds this command once for the tests that run it as processes.
func replayBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping: builds the binary")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp(testRoot, "bin-")
		if err != nil {
			binErr = err.Error()
			return
		}
		binPath = buildBinary(t, dir, "replay")
	})
	if binPath == "" {
		t.Fatalf("no binary: %s", binErr)
	}
	return binPath
}

// A simulated Indexed Job: N processes of the built binary, --index 0..N-1 --of N,
// all at once into one directory, write record files byte-identical to the local
// -j 2 sweep's; the last one to finish marks sweep.json complete. The memory the
// emitted Job asks per pod covers what each process used.
func TestSweepSimulatedIndexedJob(t *testing.T) {
	local, file := demoSweep(t)
	bin := replayBinary(t)
	dist := filepath.Join(t.TempDir(), "dist")
	const n = 5 // 12 points over 5 indexes: 3, 3, 2, 2, 2
	type result struct {
		code           int
		stdout, stderr string
		maxRSS         int64 // bytes
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var so, se bytes.Buffer
			cmd := exec.Command(bin, "sweep", "-c", file, demo, "-o", dist, "--index", strconv.Itoa(i), "--of", strconv.Itoa(n), "-j", "1", "-q")
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Start(); err != nil {
				results[i] = result{code: -1, stderr: err.Error()}
				return
			}
			// The process's peak RSS, VmHWM, read until it exits (rusage would count
			// this test's memory too: the child shares it until exec).
			exited, polled := make(chan struct{}), make(chan struct{})
			var hwm int64
			go func() {
				defer close(polled)
				for {
					if v := vmHWM(cmd.Process.Pid); v > hwm {
						hwm = v
					}
					select {
					case <-exited:
						return
					case <-time.After(time.Millisecond):
					}
				}
			}()
			err := cmd.Wait()
			close(exited)
			<-polled
			r := result{code: cmd.ProcessState.ExitCode(), stdout: so.String(), stderr: se.String(), maxRSS: hwm}
			if err != nil && r.code == 0 {
				r.code = -1
			}
			results[i] = r
		}()
	}
	wg.Wait()
	var maxRSS int64
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("--index %d: exit %d: %s", i, r.code, r.stderr)
		}
		want := (12 - i + n - 1) / n
		if !strings.Contains(r.stdout, fmt.Sprintf("ran %s in", plural(want, "point"))) {
			t.Errorf("--index %d ran other than %d points:\n%s", i, want, r.stdout)
		}
		maxRSS = max(maxRSS, r.maxRSS)
	}
	for k := range 12 {
		p := fmt.Sprintf("p%04d", k)
		run, err := records.ReadRun(filepath.Join(dist, p))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(run.Command, " "), fmt.Sprintf("--index %d --of %d", k%n, n)) {
			t.Errorf("%s was run by %q, not index %d", p, run.Command, k%n)
		}
		for name := range run.Records {
			a, erra := os.ReadFile(filepath.Join(local, p, name))
			b, errb := os.ReadFile(filepath.Join(dist, p, name))
			if erra != nil || errb != nil {
				t.Fatalf("%s/%s: %v %v", p, name, erra, errb)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("%s/%s differs between the local sweep and the indexed processes", p, name)
			}
		}
	}
	s, err := records.ReadSweep(dist)
	if err != nil || !s.Complete {
		t.Errorf("sweep.json after every index: %v complete %v", err, s != nil && s.Complete)
	}
	out, err := exec.Command(bin, "sweep", "--status", dist).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "12 points, 12 done") {
		t.Errorf("--status: %v\n%s", err, out)
	}

	// The Job's memory per pod (estimated from the trace) covers each process's peak.
	manifest, err := exec.Command(bin, "sweep", "--emit", "k8s", "--image", "tf", "--of", "3", "-c", file, demo).Output()
	if err != nil {
		t.Fatal(err)
	}
	job := decodeJob(t, manifest)
	mem := job.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory]
	if maxRSS <= 0 || mem.Value() < maxRSS {
		t.Errorf("the Job asks %s per pod; a process used %d MiB", mem.String(), maxRSS>>20)
	}
	t.Logf("%d processes; peak RSS %.1f MiB; the Job asks %s per pod", n, float64(maxRSS)/(1<<20), mem.String())
}

// vmHWM is the peak resident set size of a running process (0 once it is gone).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// decodeJob decodes an emitted manifest strictly with the official batch/v1 types.
func decodeJob(t *testing.T, manifest []byte) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	if err := k8syaml.UnmarshalStrict(manifest, &job); err != nil {
		t.Fatalf("not a batch/v1 Job: %v\n%s", err, manifest)
	}
	if len(job.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(job.Spec.Template.Spec.Containers))
	}
	return &job
}

// --status says which points are missing or incomplete (exit 3) and the same
// command resumes the sweep: only those points run, a dead process's partial
// directory is cleaned up; then --status exits 0.
func TestSweepStatusAndResume(t *testing.T) {
	local, file := demoSweep(t)
	dir := filepath.Join(t.TempDir(), "sw")
	if err := os.CopyFS(dir, os.DirFS(local)); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "p0005"))
	os.RemoveAll(filepath.Join(dir, "p0007"))
	partial := filepath.Join(dir, "p0007.partial-"+deadPID(t)+"-1")
	if err := os.MkdirAll(partial, 0o755); err != nil {
		t.Fatal(err)
	}
	// p0003 failed in the process that ran it: sweep.json says so, with the reason.
	os.RemoveAll(filepath.Join(dir, "p0003"))
	sw, err := records.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	sw.Points[3].Status, sw.Points[3].Detail = records.StatusFailed, "replay: the reason it failed"
	if err := records.WriteSweep(dir, sw); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd("sweep", "--status", dir)
	if code != exitIncomplete {
		t.Fatalf("--status of an incomplete sweep: exit %d, want %d: %s", code, exitIncomplete, stderr)
	}
	for _, want := range []string{"12 points, 9 done, 1 failed, 1 incomplete, 1 missing", "missing p0005 [hash=crc16 Switch.BufferSize=128MiB]",
		"failed p0003 [hash=crc16 Switch.BufferSize=64MiB]: replay: the reason it failed",
		"incomplete p0007 [hash=xor16 Switch.BufferSize=112MiB]: p0007.partial-"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--status lacks %q:\n%s", want, stdout)
		}
	}
	if stderr != "replay sweep: "+dir+": 3 of 12 points not done\n" {
		t.Errorf("stderr %q", stderr)
	}
	code, stdout, _ = runCmd("sweep", "--status", dir, "--json")
	var st struct {
		Complete bool
		Points   []struct {
			Dir, Status string
		}
	}
	if err := json.Unmarshal([]byte(stdout), &st); err != nil || code != exitIncomplete || st.Complete || st.Points[5].Status != "missing" || st.Points[7].Status != "incomplete" ||
		st.Points[3].Status != "failed" {
		t.Errorf("--status --json: exit %d %v %+v", code, err, st)
	}
	code, stdout, stderr = runCmd("sweep", "-c", file, demo, "-o", dir, "-j", "2", "-q")
	if code != exitOK || !strings.Contains(stdout, "ran 3 points in") || !strings.Contains(stdout, "9 points already done") {
		t.Fatalf("resume: exit %d\n%s%s", code, stdout, stderr)
	}
	if lines := strings.Split(stdout, "\n"); len(lines) != 5 || !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "p0005 ") }) ||
		!slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "p0003 ") }) ||
		!slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "p0007 ") }) {
		t.Errorf("resume ran other points:\n%s", stdout)
	}
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Errorf("the stale partial survived the resume: %v", err)
	}
	if code, stdout, _ := runCmd("sweep", "--status", dir); code != exitOK || !strings.Contains(stdout, "12 done") {
		t.Errorf("--status after the resume: exit %d: %s", code, stdout)
	}
}

// Bad sweeps and flags: exit 2, one line that names the file, point or flag and the
// rule, and no output directory left behind.
func TestSweepErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "axes:\n  hash: [crc16]\n")
	badPoint := write("bad.yaml", "axes:\n  hash: [crc16, xor16]\n  set:\n    BufferSize: [32MiB, 1KB]\n")
	badFile := write("typo.yaml", "axes:\n  hash: [crc16]\n  set:\n    Switch.BuferSize: [1MiB]\n")
	foreign := filepath.Join(dir, "foreign")
	os.MkdirAll(foreign, 0o755)
	write("foreign/notes.txt", "mine")
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad point", []string{"sweep", "-c", badPoint, demo, "-o", out}, "replay sweep: " + badPoint + ": point p0001 (hash=crc16, BufferSize=1KB): Switch.BufferSize: over-committed buffer"},
		{"typo", []string{"sweep", "-c", badFile, demo, "-o", out}, badFile + ":4: axes.set.Switch.BuferSize: unknown attribute"},
		{"no sweep file", []string{"sweep", demo, "-o", out}, "-c SWEEP.yaml: the sweep file is required"},
		{"missing sweep file", []string{"sweep", "-c", filepath.Join(dir, "nope.yaml"), demo, "-o", out}, "sweep file: open"},
		{"missing trace", []string{"sweep", "-c", good, filepath.Join(dir, "nope.pcap"), "-o", out}, "nope.pcap"},
		{"stdin", []string{"sweep", "-c", good, "-", "-o", out}, `give files, not "-"`},
		{"no trace", []string{"sweep", "-c", good, "-o", out}, "missing TRACE: the captures every point replays"},
		{"index alone", []string{"sweep", "-c", good, demo, "-o", out, "--index", "1"}, "--index and --of go together"},
		{"index too big", []string{"sweep", "-c", good, demo, "-o", out, "--index", "3", "--of", "3"}, "--index 3 --of 3"},
		{"jobs", []string{"sweep", "-c", good, demo, "-o", out, "-j", "-1"}, "-j -1: want a number of points >= 1"},
		{"foreign directory", []string{"sweep", "-c", good, demo, "-o", foreign}, `not a sweep directory (it holds "notes.txt")`},
		{"status and config", []string{"sweep", "--status", out, "-c", good}, "--status takes no --config"},
		{"status of nothing", []string{"sweep", "--status", foreign}, "has no sweep.json"},
		{"emit what", []string{"sweep", "--emit", "slurm", "--of", "2", demo}, `--emit "slurm": want k8s`},
		{"emit without of", []string{"sweep", "--emit", "k8s", "--image", "x", demo}, "--of N"},
		{"emit without image", []string{"sweep", "--emit", "k8s", "--of", "2", "--memory", "1GiB", demo}, "--image"},
		{"emit with index", []string{"sweep", "--emit", "k8s", "--of", "2", "--index", "1", demo}, "give neither"},
		{"image without emit", []string{"sweep", "-c", good, demo, "--image", "x"}, "--image goes with --emit k8s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(tc.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want 2; stdout %q stderr %q", code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q: want one line with %q", stderr, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("left %s behind (%v)", out, err)
				os.RemoveAll(out)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(foreign, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("the foreign directory was touched: %q %v", b, err)
	}
}

// Ctrl-C in the middle of a sweep: exit 130, the completed points stay, the
// interrupted point's partial directory is removed, sweep.json says incomplete, and
// the same command then runs only the rest. Interrupted before any point completed,
// the sweep leaves nothing.
func TestSweepInterrupt(t *testing.T) {
	bin := replayBinary(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "big.pcap")
	if _, err := tracegen.WriteBenchmarkFile(trace, tracegen.Benchmark{Packets: 300_000, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "four.yaml")
	os.WriteFile(file, []byte("axes:\n  hash: [crc32, crc16, xor16, toeplitz]\n"), 0o644)
	for _, after := range []string{"p0001.partial-", "p0000.partial-"} {
		t.Run("during "+strings.TrimSuffix(after, ".partial-"), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "sw")
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, "sweep", "-c", file, trace, "-o", out, "-j", "1", "-q")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			running := func() bool {
				es, _ := os.ReadDir(out)
				for _, e := range es {
					if strings.HasPrefix(e.Name(), after) {
						return true
					}
				}
				return false
			}
			if !waitFor(t, done, running) {
				<-done
				t.Fatalf("%s never appeared; stderr %q", after, stderr.String())
			}
			cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatal("still running 30 s after SIGINT")
			}
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Fatalf("exit %d, want 130; stderr %q", code, stderr.String())
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if last := lines[len(lines)-1]; last != "replay sweep: interrupted (SIGINT); partial outputs removed" {
				t.Errorf("last line of stderr %q", last)
			}
			var kept []string
			es, _ := os.ReadDir(out)
			for _, e := range es {
				if strings.Contains(e.Name(), ".partial-") {
					t.Errorf("left the partial directory %s", e.Name())
				}
				if strings.HasPrefix(e.Name(), "p0") {
					kept = append(kept, e.Name())
				}
			}
			if after == "p0000.partial-" {
				if _, err := os.Stat(out); len(kept) == 0 && !os.IsNotExist(err) {
					t.Errorf("interrupted before any point completed, the sweep left %s (%v)", out, err)
				}
				if len(kept) == 0 {
					return
				}
			}
			if len(kept) == 0 || kept[0] != "p0000" || !strings.Contains(stderr.String(), fmt.Sprintf("kept %s completed", plural(len(kept), "point"))) {
				t.Fatalf("kept %v; stderr %q", kept, stderr.String())
			}
			if s, err := records.ReadSweep(out); err != nil || s.Complete || s.Counts[records.StatusDone] != len(kept) {
				t.Errorf("sweep.json after the interrupt: %v %+v", err, s)
			}
			before, _ := os.ReadFile(filepath.Join(out, "p0000", records.RunFile))
			res, err := exec.Command(bin, "sweep", "-c", file, trace, "-o", out, "-j", "2", "-q").CombinedOutput()
			so, se := string(res), ""
			if code := 0; err != nil || !strings.Contains(so, fmt.Sprintf("ran %s in", plural(4-len(kept), "point"))) ||
				!strings.Contains(so, fmt.Sprintf("%s already done", plural(len(kept), "point"))) {
				t.Errorf("resume: exit %d\n%s%s", code, so, se)
			}
			if after, _ := os.ReadFile(filepath.Join(out, "p0000", records.RunFile)); !bytes.Equal(before, after) {
				t.Error("the resume ran p0000 again")
			}
		})
	}
}

// The 144-point sweep of the issue (6 hashes x 4 buffer sizes x 3 loads x 2
// transports) as an Indexed Job: the command under the mount, the run flags given
// passed on, 1 CPU and the memory asked per pod.
func TestSweepEmitK8s(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sweep144.yaml")
	os.WriteFile(file, []byte("axes:\n  hash: [all]\n  transport: [open, closed]\n  speedup: [1, 2, 4]\n  set:\n    Switch.BufferSize: [16MiB, 32MiB, 64MiB, 128MiB]\n"), 0o644)
	code, stdout, stderr := runCmd("sweep", "--emit", "k8s", "--image", "registry.example.com/tracefabric:0.1", "--of", "16",
		"--memory", "2GiB", "--parallelism", "8", "-c", file, "-o", "out/sweep144", "--max-drain", "10ms", "--hosts", "hash", "--strict", demo)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr %q", stderr)
	}
	job := decodeJob(t, []byte(stdout))
	c := job.Spec.Template.Spec.Containers[0]
	want := []string{"-c", file, "-o", "/data/out/sweep144", "-j", "1", "-q", "--hosts", "hash", "--max-drain", "10ms", "--strict=true",
		filepath.Join("/data", demo), "--index", "$(JOB_COMPLETION_INDEX)", "--of", "16"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args\n%q, want\n%q", c.Args, want)
	}
	mem := c.Resources.Limits[corev1.ResourceMemory]
	cpu := c.Resources.Requests[corev1.ResourceCPU]
	if *job.Spec.Completions != 16 || *job.Spec.Parallelism != 8 || mem.Value() != 2<<30 || cpu.Value() != 1 ||
		job.Name != "tracefabric-sweep-sweep144" || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completions %d parallelism %d memory %s cpu %s name %s", *job.Spec.Completions, *job.Spec.Parallelism, mem.String(), cpu.String(), job.Name)
	}
	// A sweep file that is not readable here is not checked, and the Job says where
	// it reads it.
	code, stdout, stderr = runCmd("sweep", "--emit", "k8s", "--image", "i", "--of", "2", "--memory", "1GiB", "-c", "sweeps/x.yaml", "--mount", "/mnt/t", "/mnt/t/demo.pcap")
	if code != exitOK || !strings.Contains(stderr, "sweeps/x.yaml is not readable here: the Job reads /mnt/t/sweeps/x.yaml (not checked)") {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	if job := decodeJob(t, []byte(stdout)); !slices.Contains(job.Spec.Template.Spec.Containers[0].Args, "/mnt/t/sweeps/x.yaml") {
		t.Errorf("args %q", job.Spec.Template.Spec.Containers[0].Args)
	}
	// A readable sweep file is checked: a bad point is exit 2 before any manifest.
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("axes:\n  set:\n    BufferSize: [0]\n"), 0o644)
	if code, stdout, stderr := runCmd("sweep", "--emit", "k8s", "--image", "i", "--of", "2", "--memory", "1GiB", "-c", bad, demo); code != exitUsage || stdout != "" || !strings.Contains(stderr, "point p0000") {
		t.Errorf("bad sweep file: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// The Kubernetes API types are for the tests: the replay command does not link them.
func TestReplayDoesNotImportKubernetes(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("skipping: no go tool: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "go.yaml.in/yaml/v3") || !slices.Contains(deps, "github.com/tracefabric/tracefabric/replay/sweep") {
		t.Fatalf("go list -deps does not list what replay imports: %q", deps)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "k8s.io/") || strings.HasPrefix(d, "sigs.k8s.io/") {
			t.Errorf("replay depends on %s", d)
		}
	}
}

// TestSweepThreads: --threads N gives each point N partitions (run.json
// simulation.threads), the records are those of the sequential points byte for byte,
// and -j x --threads above the CPUs is said in a warning.
func TestSweepThreads(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "two.yaml")
	if err := os.WriteFile(file, []byte("axes:\n  hash: [crc32, crc16]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	seq, par := filepath.Join(root, "seq"), filepath.Join(root, "par")
	if code, _, stderr := runCmd("sweep", "-c", file, demo, "-o", seq, "-j", "1", "-q"); code != exitOK {
		t.Fatalf("sweep -j 1: exit %d: %s", code, stderr)
	}
	code, _, stderr := runCmd("sweep", "-c", file, demo, "-o", par, "-j", "1", "--threads", "2", "-q")
	if code != exitOK {
		t.Fatalf("sweep --threads 2: exit %d: %s", code, stderr)
	}
	for _, p := range []string{"p0000", "p0001"} {
		if th := readRun(t, filepath.Join(seq, p)).Simulation.Threads; th == nil || th.Used != 1 {
			t.Errorf("%s without --threads: simulation.threads %+v, want 1 used", p, th)
		}
		th := readRun(t, filepath.Join(par, p)).Simulation.Threads
		if th == nil || th.Asked != 2 || th.Used != 2 {
			t.Errorf("%s with --threads 2: simulation.threads %+v, want 2 asked and used", p, th)
		}
		files, err := filepath.Glob(filepath.Join(seq, p, "*.arrow"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no record files (%v)", p, err)
		}
		for _, f := range files {
			a, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(par, p, filepath.Base(f)))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("%s/%s differs with --threads 2", p, filepath.Base(f))
			}
		}
	}
	_, _, stderr = runCmd("sweep", "-c", file, demo, "-o", filepath.Join(root, "over"), "-j", "2", "--threads", "4096", "-q")
	if !strings.Contains(stderr, "-j 2 x --threads 4096 = 8192 threads on") {
		t.Errorf("-j 2 --threads 4096: no warning about the CPUs in %q", stderr)
	}
	if code, _, stderr := runCmd("sweep", "-c", file, demo, "-o", filepath.Join(root, "bad"), "--threads", "-1"); code != exitUsage || !strings.Contains(stderr, "--threads -1") {
		t.Errorf("--threads -1: exit %d, %q; want a usage error naming it", code, stderr)
	}
}
