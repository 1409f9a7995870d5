package replay

import (
	"math"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/records"
)

// Derive returns a Prepared that replays pr's trace, host mapping and fabric with
// another configuration and speedup, without reading the trace summary again: what
// the points of a sweep share (README, "replay sweep"). cfg must describe pr's
// topology (the fabric and the host mapping depend on it); everything else, transport
// mode included, may differ (the preparation's pass read the facts closed-loop flows
// need whatever its transport). The result has its own Options (pr.Opt with Config and Speedup
// replaced), so the caller may set its Command, Progress, Warn or Context; like a
// Prepared, it is read-only once Run starts and runs in parallel with pr and other
// derived ones.
func (pr *Prepared) Derive(cfg *config.Config, speedup float64) (*Prepared, error) {
	return pr.DeriveLoad(cfg, speedup, pr.Opt.Replicate, pr.Opt.TargetLoad)
}

// DeriveLoad is Derive with the point's own --replicate counts and --target-load
// (percent, 0: off; speedup is then ignored): the target-load search evaluates pr's
// trace cache (read once more, for all the runs derived from pr, when pr's pass did
// not keep it).
func (pr *Prepared) DeriveLoad(cfg *config.Config, speedup float64, replicate []int, targetLoad float64) (*Prepared, error) {
	if cfg == nil {
		return nil, inputErrf("replay: Derive: no configuration")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Topology != pr.Opt.Config.Topology {
		return nil, inputErrf("replay: Derive: the configuration's topology differs from the prepared one (prepare it on its own)")
	}
	if _, _, err := pr.Topo.SwitchConfigs(cfg); err != nil {
		return nil, inputErrf("%w", err)
	}
	if !(speedup > 0) || math.IsInf(speedup, 0) {
		return nil, inputErrf("--speedup %v must be a finite number > 0", speedup)
	}
	opt := pr.Opt
	opt.Config, opt.Speedup, opt.Replicate, opt.TargetLoad = cfg, speedup, replicate, targetLoad
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	if _, err := planEvents(pr.Topo, cfg, speedup); err != nil {
		return nil, err
	}
	d := &Prepared{Opt: opt, Summary: pr.Summary, Topo: pr.Topo, HostMap: pr.HostMap, T0: pr.T0, Idle: pr.Idle,
		fileOffset: pr.fileOffset, tuples: pr.tuples, facts: pr.facts, hosts: pr.hosts, cache: pr.cache, lazy: pr.lazy, keep: pr.keep}
	if err := d.load(); err != nil {
		return nil, err
	}
	return d, nil
}

// RunOptions are the options besides the configuration that run.json records for a
// replay with these options (run.json "options"; lb and hash, which come from the
// configuration, left empty): traces and host file as absolute paths.
func (o *Options) RunOptions() *records.RunOptions { r := o.runOptions(); return &r }
