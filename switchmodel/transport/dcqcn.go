package transport

import (
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// rp is the reaction point of one DCQCN flow (docs/model.md#dcqcn): its current rate
// RC, target rate RT and alpha, and the three periodic timers of ConnectX (HPCC's
// "Mlx" mode), evaluated lazily.
//
// Timeline: nothing happens before the flow's first CNP; then alpha is updated every
// AlphaUpdateInterval (ta) from the first CNP's time, the rate is cut every
// RateDecreaseInterval (td) if a CNP arrived since the last cut, and increased every
// RateIncreaseTimer (ti) after the last cut. At equal times the alpha update comes
// first, then the increase, then the cut; a CNP arriving exactly at a tick counts
// after it. advance(now) applies every tick at or before now, so the state is exact
// whenever it is read; a flow without CNPs has no ticks at all.
type rp struct {
	line, rc, rt, alpha float64 // rates in bit/s
	g, ai, hai, minRate float64
	ta, td, ti          units.Time
	f                   int

	started          bool       // a CNP arrived: the timers run
	alphaTick        units.Time // time of the last alpha update applied
	anchor           float64    // alpha right after the update at anchorTick
	anchorTick       units.Time
	decTick          units.Time // the next rate-decrease tick
	incTick          units.Time // the next rate-increase tick, when incOn
	incOn            bool
	stage            int   // increases since the last cut (the counter i of the spec)
	alphaCNP, decCNP bool  // a CNP arrived in the current alpha slot / since the last cut
	cuts             int64 // cuts that lowered RC
	// emit, when set, reports the cuts and increases that changed RC, with the time
	// they took effect.
	emit func(t units.Time, k EventKind, rc float64)
}

func newRP(cfg *config.Transport, line units.BitRate) rp {
	ai, hai := cfg.RateIncrease(line)
	return rp{line: float64(line), rc: float64(line), rt: float64(line), alpha: 1,
		g: cfg.DcqcnG, ai: float64(ai), hai: float64(hai), minRate: float64(cfg.MinRate),
		ta: cfg.AlphaUpdateInterval, td: cfg.RateDecreaseInterval, ti: cfg.RateIncreaseTimer,
		f: cfg.FastRecoverySteps}
}

// cnp registers a CNP received at now.
func (r *rp) cnp(now units.Time) {
	r.advance(now)
	if !r.started {
		// The first CNP starts the timers: alpha from 1, first cut one td later.
		r.started = true
		r.alpha, r.anchor = 1, 1
		r.alphaTick, r.anchorTick = now, now
		r.decTick = now + r.td
		r.rt = r.rc
		r.alphaCNP = false
	} else {
		r.alphaCNP = true
	}
	r.decCNP = true
}

// rate returns RC at now.
func (r *rp) rate(now units.Time) float64 {
	r.advance(now)
	return r.rc
}

// advance applies every tick at or before now.
func (r *rp) advance(now units.Time) {
	if !r.started {
		return
	}
	for {
		inc := r.incOn
		dec := r.decCNP
		var t units.Time
		switch {
		case inc && dec:
			t = min(r.incTick, r.decTick)
		case inc:
			t = r.incTick
		case dec:
			t = r.decTick
		default:
			t = now + 1
		}
		if t > now {
			break
		}
		r.alphaTo(t)
		if inc && r.incTick == t {
			was := r.rc
			r.increase()
			if r.emit != nil && r.rc != was {
				r.emit(t, EventRateIncrease, r.rc)
			}
			r.incTick += r.ti
			if r.rc >= r.line && r.rt >= r.line {
				r.incOn = false // every further increase would leave both at line rate
			}
		}
		if dec && r.decTick == t {
			r.decrease(t)
		}
	}
	r.alphaTo(now)
	if !r.decCNP && r.decTick <= now {
		// Cuts without a CNP do nothing: move to the first tick after now.
		r.decTick += ((now-r.decTick)/r.td + 1) * r.td
	}
}

// alphaTo applies the alpha updates at alphaTick + k*ta <= t. Only an update whose
// slot saw a CNP adds g (a CNP advances the state before it sets alphaCNP, so only the
// first new update can have one); every other update multiplies by 1-g. alpha is
// kept as anchor * (1-g)^(updates since the anchor), the anchor being the last update
// that added g (or the first CNP's alpha of 1), so its value at a time does not
// depend on when it was read.
func (r *rp) alphaTo(t units.Time) {
	k := (t - r.alphaTick) / r.ta
	if k <= 0 {
		return
	}
	d := 1 - r.g
	if r.alphaCNP {
		r.anchor = float64(d*r.alpha) + r.g
		r.anchorTick = r.alphaTick + r.ta
		r.alphaCNP = false
	}
	r.alphaTick += k * r.ta
	r.alpha = float64(r.anchor * powInt(d, (r.alphaTick-r.anchorTick)/r.ta))
}

// powInt returns x^n by squaring (the same sequence of float64 products on every
// machine).
func powInt(x float64, n units.Time) float64 {
	p := 1.0
	for n > 0 {
		if n&1 != 0 {
			p = float64(p * x)
		}
		x = float64(x * x)
		n >>= 1
	}
	return p
}

// decrease is the cut at time t: RT = RC if the rate was increased since the last
// cut, RC = max(MinRate, RC*(1-alpha/2)); the increase stage restarts. A cut of a
// sender already at MinRate leaves RC where it is: it restarts the increase timer
// all the same, but is not a rate cut (cuts, EventRateCut: only a lower rate).
func (r *rp) decrease(t units.Time) {
	if r.stage != 0 {
		r.rt = r.rc
	}
	was := r.rc
	r.rc = max(r.minRate, float64(r.rc*float64(1-r.alpha/2)))
	r.stage = 0
	r.decCNP = false
	r.decTick = t + r.td
	r.incOn = true
	r.incTick = t + r.ti
	if r.rc == was {
		return
	}
	r.cuts++
	if r.emit != nil {
		r.emit(t, EventRateCut, r.rc)
	}
}

// increase is one rate-increase tick: fast recovery while the stage is below F,
// additive increase at F, hyper increase after; RT and RC never exceed line rate.
func (r *rp) increase() {
	switch {
	case r.stage < r.f:
	case r.stage == r.f:
		r.rt = min(r.rt+r.ai, r.line)
	default:
		r.rt = min(r.rt+r.hai, r.line)
	}
	r.rc = min(r.rc/2+r.rt/2, r.line)
	r.stage++
}
