package sweep

import (
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	k8syaml "sigs.k8s.io/yaml"
)

// decodeJob decodes a manifest with the official API types, strictly: a field the
// batch/v1 or core/v1 types do not have is an error.
func decodeJob(t *testing.T, manifest []byte) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	if err := k8syaml.UnmarshalStrict(manifest, &job); err != nil {
		t.Fatalf("the manifest does not decode as a batch/v1 Job: %v\n%s", err, manifest)
	}
	return &job
}

// The manifest is a batch/v1 Indexed Job: N completions, the container's command
// with --index $(JOB_COMPLETION_INDEX) (Kubernetes expands it from the variable the
// Job controller sets), one CPU and the memory per pod, the shared claim.
func TestJobManifest(t *testing.T) {
	args := []string{"-c", "/data/sweep.yaml", "-o", "/data/out/sweep", "-j", "1", "/data/demo.pcap"}
	manifest, err := Job(JobOptions{Name: "tracefabric-sweep-demo", Image: "registry.example.com/tracefabric:0.1", Of: 12,
		Parallelism: 4, BackoffLimitPerIndex: 3, MemoryBytes: 300 << 20, Claim: "sweeps", Mount: "/data", Args: args})
	if err != nil {
		t.Fatal(err)
	}
	job := decodeJob(t, manifest)
	s := &job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Name != "tracefabric-sweep-demo" {
		t.Errorf("apiVersion %q kind %q name %q", job.APIVersion, job.Kind, job.Name)
	}
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || *s.Completions != 12 || s.Parallelism == nil || *s.Parallelism != 4 {
		t.Errorf("completions %v parallelism %v", s.Completions, s.Parallelism)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 3 {
		t.Errorf("backoffLimitPerIndex %v", s.BackoffLimitPerIndex)
	}
	if p := s.PodFailurePolicy; p == nil || len(p.Rules) != 1 || p.Rules[0].Action != batchv1.PodFailurePolicyActionFailIndex ||
		p.Rules[0].OnExitCodes == nil || !slices.Equal(p.Rules[0].OnExitCodes.Values, []int32{2}) ||
		p.Rules[0].OnExitCodes.Operator != batchv1.PodFailurePolicyOnExitCodesOpIn {
		t.Errorf("podFailurePolicy %+v: want FailIndex on exit code 2", s.PodFailurePolicy)
	}
	pod := &s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever { // required by backoffLimitPerIndex
		t.Errorf("restartPolicy %q", pod.RestartPolicy)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := &pod.Containers[0]
	if c.Image != "registry.example.com/tracefabric:0.1" || !slices.Equal(c.Command, []string{"replay", "sweep"}) {
		t.Errorf("image %q command %q", c.Image, c.Command)
	}
	want := append(append([]string{}, args...), "--index", "$(JOB_COMPLETION_INDEX)", "--of", "12")
	if !slices.Equal(c.Args, want) {
		t.Errorf("args %q, want %q", c.Args, want)
	}
	for _, rl := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
		cpu, mem := rl[corev1.ResourceCPU], rl[corev1.ResourceMemory]
		if cpu.Cmp(resource.MustParse("1")) != 0 || mem.Value() != 300<<20 {
			t.Errorf("resources cpu %s memory %s (%d B)", cpu.String(), mem.String(), mem.Value())
		}
	}
	if len(c.VolumeMounts) != 1 || len(pod.Volumes) != 1 || c.VolumeMounts[0].MountPath != "/data" ||
		c.VolumeMounts[0].Name != pod.Volumes[0].Name || pod.Volumes[0].PersistentVolumeClaim == nil ||
		pod.Volumes[0].PersistentVolumeClaim.ClaimName != "sweeps" {
		t.Errorf("volume %+v mounts %+v", pod.Volumes, c.VolumeMounts)
	}
	if job.Spec.Template.Labels["tracefabric/sweep"] != job.Name {
		t.Errorf("pod labels %v", job.Spec.Template.Labels)
	}
	// Parallelism 0 is every index at once.
	manifest, err = Job(JobOptions{Name: "x", Image: "i", Of: 5, MemoryBytes: 1, Claim: "c", Mount: "/m"})
	if err != nil {
		t.Fatal(err)
	}
	if job := decodeJob(t, manifest); *job.Spec.Parallelism != 5 || *job.Spec.BackoffLimitPerIndex != 0 {
		t.Errorf("parallelism %d backoff %d", *job.Spec.Parallelism, *job.Spec.BackoffLimitPerIndex)
	}
}

func TestJobRefusesBadOptions(t *testing.T) {
	ok := JobOptions{Name: "a", Image: "i", Of: 2, MemoryBytes: 1, Claim: "c", Mount: "/m"}
	for name, mod := range map[string]func(o *JobOptions){
		"name":   func(o *JobOptions) { o.Name = "Bad_Name" },
		"image":  func(o *JobOptions) { o.Image = "" },
		"of":     func(o *JobOptions) { o.Of = 0 },
		"memory": func(o *JobOptions) { o.MemoryBytes = 0 },
		"pvc":    func(o *JobOptions) { o.Claim = "a/b" },
		"mount":  func(o *JobOptions) { o.Mount = "data" },
	} {
		o := ok
		mod(&o)
		if _, err := Job(o); err == nil || !strings.Contains(err.Error(), "--"+name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Job(ok); err != nil {
		t.Error(err)
	}
}

func TestJobName(t *testing.T) {
	for in, want := range map[string]string{
		"sweep":                 "tracefabric-sweep-sweep",
		"Buffer_Size x2":        "tracefabric-sweep-buffer-size-x2",
		"--":                    "tracefabric-sweep",
		strings.Repeat("a", 80): "tracefabric-sweep-" + strings.Repeat("a", 63-len("tracefabric-sweep-")),
	} {
		if got := JobName(in); got != want || !dnsLabel.MatchString(got) || len(got) > 63 {
			t.Errorf("JobName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQuantity(t *testing.T) {
	for b, want := range map[int64]string{1: "1Mi", 1 << 20: "1Mi", 1<<20 + 1: "2Mi", 3 << 30: "3072Mi"} {
		q := Quantity(b)
		parsed := resource.MustParse(q)
		if q != want || parsed.Value() < b {
			t.Errorf("Quantity(%d) = %s, want %s", b, q, want)
		}
	}
}
