package sweep

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/replay"
)

// JobOptions describe a Kubernetes Indexed Job that runs a sweep: Of pods (one per
// completion index), each running `replay sweep ... --index $(JOB_COMPLETION_INDEX)
// --of Of` with one CPU, all writing into one directory on a shared volume
// (README, "replay sweep").
type JobOptions struct {
	Name  string // Job name (DNS-1123 label)
	Image string // container image holding the replay binary on its PATH
	Of    int    // completions: the number of indexes
	// Parallelism is how many indexes run at once (0: Of).
	Parallelism int
	// BackoffLimitPerIndex is how many times a failed index is retried.
	BackoffLimitPerIndex int
	// MemoryBytes is each pod's memory request and limit.
	MemoryBytes int64
	// Claim is the PersistentVolumeClaim (ReadWriteMany) mounted at Mount, holding
	// the traces, the sweep file and the output directory.
	Claim, Mount string
	// Args are `replay sweep`'s arguments besides --index and --of (paths as the
	// container sees them).
	Args []string
}

// The manifest's objects, with the field names of the batch/v1 and core/v1 APIs.
type (
	k8sJob struct {
		APIVersion string  `yaml:"apiVersion"`
		Kind       string  `yaml:"kind"`
		Metadata   k8sMeta `yaml:"metadata"`
		Spec       jobSpec `yaml:"spec"`
	}
	k8sMeta struct {
		Name   string            `yaml:"name,omitempty"`
		Labels map[string]string `yaml:"labels,omitempty"`
	}
	jobSpec struct {
		CompletionMode       string           `yaml:"completionMode"`
		Completions          int              `yaml:"completions"`
		Parallelism          int              `yaml:"parallelism"`
		BackoffLimitPerIndex int              `yaml:"backoffLimitPerIndex"`
		PodFailurePolicy     podFailurePolicy `yaml:"podFailurePolicy"`
		Template             podTemplate      `yaml:"template"`
	}
	podFailurePolicy struct {
		Rules []podFailureRule `yaml:"rules"`
	}
	podFailureRule struct {
		Action      string          `yaml:"action"`
		OnExitCodes exitCodeMatcher `yaml:"onExitCodes"`
	}
	exitCodeMatcher struct {
		Operator string `yaml:"operator"`
		Values   []int  `yaml:"values,flow"`
	}
	podTemplate struct {
		Metadata k8sMeta `yaml:"metadata"`
		Spec     podSpec `yaml:"spec"`
	}
	podSpec struct {
		RestartPolicy string      `yaml:"restartPolicy"`
		Containers    []container `yaml:"containers"`
		Volumes       []volume    `yaml:"volumes"`
	}
	container struct {
		Name         string        `yaml:"name"`
		Image        string        `yaml:"image"`
		Command      []string      `yaml:"command,flow"`
		Args         []string      `yaml:"args"`
		Resources    resources     `yaml:"resources"`
		VolumeMounts []volumeMount `yaml:"volumeMounts"`
	}
	resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	}
	volumeMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	}
	volume struct {
		Name                  string   `yaml:"name"`
		PersistentVolumeClaim pvcModel `yaml:"persistentVolumeClaim"`
	}
	pvcModel struct {
		ClaimName string `yaml:"claimName"`
	}
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// JobName makes a Job name (a DNS-1123 label of at most 63 characters) from a sweep
// file's base name: "tracefabric-sweep-" + the name in lower case, other characters
// as '-'.
func JobName(base string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim("tracefabric-sweep-"+b.String(), "-")
	for strings.Contains(name, "--") {
		name = strings.ReplaceAll(name, "--", "-")
	}
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	return name
}

// Job writes the batch/v1 Job manifest of o as YAML: completionMode Indexed,
// completions and parallelism, backoffLimitPerIndex, a pod failure policy that does
// not retry an index that failed on its input (exit status 2: retrying cannot help),
// restartPolicy Never, the container's command with --index $(JOB_COMPLETION_INDEX)
// (Kubernetes expands the variable the Job controller sets), one CPU and the memory
// per pod, and the shared volume.
func Job(o JobOptions) ([]byte, error) {
	switch {
	case !dnsLabel.MatchString(o.Name) || len(o.Name) > 63:
		return nil, inputErrf("--name %q: want a DNS-1123 label (lower-case letters, digits and '-', at most 63)", o.Name)
	case o.Image == "":
		return nil, inputErrf("--image: the container image holding replay is required")
	case o.Of < 1:
		return nil, inputErrf("--of %d: want the number of indexes, >= 1", o.Of)
	case o.Parallelism < 0 || o.BackoffLimitPerIndex < 0:
		return nil, inputErrf("--parallelism and --backoff-limit-per-index must be >= 0")
	case o.MemoryBytes <= 0:
		return nil, inputErrf("--memory: want a size > 0")
	case !dnsLabel.MatchString(o.Claim):
		return nil, inputErrf("--pvc %q: want the name of a PersistentVolumeClaim", o.Claim)
	case !strings.HasPrefix(o.Mount, "/"):
		return nil, inputErrf("--mount %q: want an absolute path", o.Mount)
	}
	par := o.Parallelism
	if par == 0 {
		par = o.Of
	}
	labels := map[string]string{"app.kubernetes.io/name": "tracefabric", "app.kubernetes.io/component": "sweep", "tracefabric/sweep": o.Name}
	args := append(append([]string{}, o.Args...), "--index", "$(JOB_COMPLETION_INDEX)", "--of", strconv.Itoa(o.Of))
	mem := Quantity(o.MemoryBytes)
	res := resources{
		Requests: map[string]string{"cpu": "1", "memory": mem},
		Limits:   map[string]string{"cpu": "1", "memory": mem},
	}
	job := k8sJob{
		APIVersion: "batch/v1",
		Kind:       "Job",
		Metadata:   k8sMeta{Name: o.Name, Labels: labels},
		Spec: jobSpec{
			CompletionMode:       "Indexed",
			Completions:          o.Of,
			Parallelism:          par,
			BackoffLimitPerIndex: o.BackoffLimitPerIndex,
			PodFailurePolicy: podFailurePolicy{Rules: []podFailureRule{
				{Action: "FailIndex", OnExitCodes: exitCodeMatcher{Operator: "In", Values: []int{2}}},
			}},
			Template: podTemplate{
				Metadata: k8sMeta{Labels: labels},
				Spec: podSpec{
					RestartPolicy: "Never",
					Containers: []container{{
						Name:         "replay",
						Image:        o.Image,
						Command:      []string{"replay", "sweep"},
						Args:         args,
						Resources:    res,
						VolumeMounts: []volumeMount{{Name: "data", MountPath: o.Mount}},
					}},
					Volumes: []volume{{Name: "data", PersistentVolumeClaim: pvcModel{ClaimName: o.Claim}}},
				},
			},
		},
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# A Kubernetes Indexed Job running a tracefabric sweep: pod i runs the points k with\n")
	fmt.Fprintf(&b, "# k mod %d == i, one CPU each, into one directory on the volume claim %q\n", o.Of, o.Claim)
	fmt.Fprintf(&b, "# (ReadWriteMany). kubectl apply -f this file; replay sweep --status DIR says\n")
	fmt.Fprintf(&b, "# which points are done.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&job); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Quantity writes a byte count as a Kubernetes quantity in whole mebibytes, rounded
// up ("512Mi").
func Quantity(bytes int64) string {
	const mi = 1 << 20
	return strconv.FormatInt((bytes+mi-1)/mi, 10) + "Mi"
}

// EstimateMemory is a memory request for one point of a sweep of the trace (a
// process running its points one at a time, -j 1) whose trace cache may take cache
// bytes (Options.Cache). A replay streams its records, and the capture too when the
// trace is not cached, so what grows is the cache and, per flow, the flow state, the
// trace summary's flow set, the flow rows. Measured peak RSS without a cache: 45 MB
// with 4,096 flows (1 M packets), 280 MB with 200,000 flows (1 M packets), about
// 1.2 KB per flow over a 45 MB base; the estimate is 128 MiB plus twice that per flow
// (2.5 KiB), plus the cache (replay.CacheEntryBytes per replayed packet and
// replay.CacheFlowBytes per flow, when that fits in cache), rounded up to 64 MiB.
func EstimateMemory(sum *ingest.Summary, cache int64) int64 {
	const (
		base      = 128 << 20
		perFlow   = 2560
		roundUnit = 64 << 20
	)
	need := base + perFlow*sum.Flows
	if c := sum.Unicast*replay.CacheEntryBytes + sum.UnicastFlows*replay.CacheFlowBytes; c <= cache {
		need += c
	}
	return (need + roundUnit - 1) / roundUnit * roundUnit
}
