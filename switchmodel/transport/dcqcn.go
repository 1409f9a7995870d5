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
//
// The paper variant (DcqcnVariant paper) keeps the same state with other rules: a CNP
// cuts at once with the alpha before it, then raises alpha by g; alpha decays by 1-g
// every ta after the last CNP; increases come from the timer (every ti after the last
// cut) and the byte counter (every bc bytes sent after it), stage = max/min of the
// two counts (cnpPaper, advancePaper, increasePaper).
type rp struct {
	line, rc, rt, alpha float64 // rates in bit/s
	g, ai, hai, minRate float64
	ta, td, ti          units.Time
	f                   int
	clamp               bool    // ClampTargetRate
	first               float64 // RateOnFirstCnp (mlx)
	paper               bool    // DcqcnVariant paper
	bc                  int64   // paper: ByteCounter, bytes (0: none)
	bytes               int64   // paper: bytes sent since the last byte-counter event or cut
	bcStage             int     // paper: byte-counter events since the last cut
	lastCnp             units.Time

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
		f: cfg.FastRecoverySteps, clamp: cfg.ClampTargetRate, first: cfg.RateOnFirstCnp,
		paper: cfg.DcqcnVariant == config.DcqcnPaper, bc: int64(cfg.ByteCounter)}
}

// cnp registers a CNP received at now.
func (r *rp) cnp(now units.Time) {
	if r.paper {
		r.cnpPaper(now)
		return
	}
	r.advance(now)
	if !r.started {
		// The first CNP starts the timers: alpha from 1, first cut one td later, and
		// RC = RT = RateOnFirstCnp x RC.
		r.started = true
		r.alpha, r.anchor = 1, 1
		r.alphaTick, r.anchorTick = now, now
		r.decTick = now + r.td
		if r.first != 1 {
			r.setRate(now, max(r.minRate, float64(r.first*r.rc)))
		}
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
	if r.paper {
		r.advancePaper(now)
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
	if r.stage != 0 || r.clamp {
		r.rt = r.rc
	}
	r.setRate(t, max(r.minRate, float64(r.rc*float64(1-r.alpha/2))))
	r.stage = 0
	r.decCNP = false
	r.decTick = t + r.td
	r.incOn = true
	r.incTick = t + r.ti
}

// setRate lowers RC to rc at t, counting and reporting it as a cut if it is lower.
func (r *rp) setRate(t units.Time, rc float64) {
	was := r.rc
	r.rc = rc
	if r.rc >= was {
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

// cnpPaper is the paper variant's reaction to a CNP: RT = RC (if ClampTargetRate or
// an increase happened since the last cut), RC = max(MinRate, RC (1 - alpha/2)) with
// the alpha before the CNP, then alpha = (1-g) alpha + g; both counters restart, the
// alpha timer and the increase timer restart from now.
func (r *rp) cnpPaper(now units.Time) {
	r.advance(now)
	a := r.alphaPaper(now) // 1 before the first CNP
	r.started = true
	if r.clamp || r.stage != 0 || r.bcStage != 0 {
		r.rt = r.rc
	}
	r.setRate(now, max(r.minRate, float64(r.rc*float64(1-a/2))))
	r.alpha = float64((1-r.g)*a) + r.g
	r.anchor, r.lastCnp = r.alpha, now
	r.stage, r.bcStage, r.bytes = 0, 0, 0
	r.incOn = true
	r.incTick = now + r.ti
}

// alphaPaper is the paper variant's alpha at t: the alpha after the last CNP, times
// 1-g for every whole ta since it.
func (r *rp) alphaPaper(t units.Time) float64 {
	if !r.started {
		return r.alpha
	}
	return float64(r.anchor * powInt(1-r.g, (t-r.lastCnp)/r.ta))
}

// advancePaper applies the increase-timer ticks at or before now.
func (r *rp) advancePaper(now units.Time) {
	for r.incOn && r.incTick <= now {
		r.stage++
		r.increaseAt(r.incTick)
		r.incTick += r.ti
	}
	r.alpha = r.alphaPaper(now)
}

// sent counts bytes sent at now towards the paper variant's byte counter: every bc
// bytes since the last cut is an increase event (the bytes beyond it start the next).
func (r *rp) sent(now units.Time, bytes int64) {
	if !r.paper || r.bc <= 0 || !r.started || !r.incOn {
		return
	}
	r.advance(now)
	r.bytes += bytes
	for r.bytes >= r.bc && r.incOn {
		r.bytes -= r.bc
		r.bcStage++
		r.increaseAt(now)
	}
}

// increaseAt is one increase event of the paper variant at t: fast recovery while
// max(T, BC) < F, hyper increase by (min(T, BC) - F) x RateHAI once min(T, BC) > F,
// additive increase between; RC = (RT + RC)/2; RT and RC never exceed line rate.
func (r *rp) increaseAt(t units.Time) {
	was := r.rc
	mx, mn := max(r.stage, r.bcStage), min(r.stage, r.bcStage)
	if r.bc <= 0 {
		mx, mn = r.stage, r.stage // no byte counter: the timer alone
	}
	switch {
	case mx < r.f:
	case mn > r.f:
		r.rt = min(r.rt+float64(mn-r.f)*r.hai, r.line)
	default:
		r.rt = min(r.rt+r.ai, r.line)
	}
	r.rc = min(r.rc/2+r.rt/2, r.line)
	if r.emit != nil && r.rc != was {
		r.emit(t, EventRateIncrease, r.rc)
	}
	if r.rc >= r.line && r.rt >= r.line {
		r.incOn = false
	}
}
