package config

import (
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// The closed-loop attributes of issue 26 reject what they must, naming the attribute
// and the rule.
func TestTransportRulesRejectBadValues(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"Transport.IdleRestart=slow", `--set: Transport.IdleRestart: invalid value: idle restart "slow" is unknown (want rfc5681, linux, off)`},
		{"Transport.NicControlPriority=tcp", `NIC control priority "tcp" is unknown (want roce, all, none)`},
		{"Transport.DcqcnVariant=qcn", `DCQCN variant "qcn" is unknown (want mlx, paper)`},
		{"Transport.NakInterval=-1us", "Transport.NakInterval: -1us is negative (0 = one NAK per gap)"},
		{"Transport.RateOnFirstCnp=1.5", "Transport.RateOnFirstCnp: 1.5 is outside [0,1] (a fraction of the current rate)"},
		{"Transport.ByteCounter=10MB", "Transport.ByteCounter: 10MB: the mlx variant has no byte counter (DcqcnVariant: paper has one)"},
		{"Transport.LimitedTransmit=maybe", "Transport.LimitedTransmit"},
	} {
		_, _, err := Parse(nil, "", []string{c.set})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %s: error %v, want it to contain %q", c.set, err, c.want)
		}
	}
}

// DcqcnVariant paper gives the attributes the configuration leaves unset the paper's
// values (docs/model.md#dcqcn) and keeps those it sets, from a file or --set alike, so
// that a sweep axis DcqcnVariant: [mlx, paper] compares the two as published; a
// configuration written out (run.json, replay config) loads back to the same values.
func TestDcqcnPaperDefaults(t *testing.T) {
	paper := func(c *Config) Transport {
		t := c.Transport
		return Transport{AlphaUpdateInterval: t.AlphaUpdateInterval, RateIncreaseTimer: t.RateIncreaseTimer,
			FastRecoverySteps: t.FastRecoverySteps, ByteCounter: t.ByteCounter, CnpInterval: t.CnpInterval, ClampTargetRate: t.ClampTargetRate}
	}
	want := Transport{AlphaUpdateInterval: 55 * units.Microsecond, RateIncreaseTimer: 55 * units.Microsecond,
		FastRecoverySteps: 5, ByteCounter: 10 * units.MB, CnpInterval: 50 * units.Microsecond, ClampTargetRate: true}
	c, _, err := Parse(nil, "", []string{"Transport.DcqcnVariant=paper"})
	if err != nil {
		t.Fatal(err)
	}
	if got := paper(c); got != want {
		t.Errorf("paper defaults %+v, want %+v", got, want)
	}
	// Set in the file or by --set: kept.
	c, _, err = Parse([]byte("Transport:\n  DcqcnVariant: paper\n  FastRecoverySteps: 1\n"), "p.yaml", []string{"Transport.CnpInterval=4us"})
	if err != nil {
		t.Fatal(err)
	}
	w := want
	w.FastRecoverySteps, w.CnpInterval = 1, 4*units.Microsecond
	if got := paper(c); got != w {
		t.Errorf("with FastRecoverySteps and CnpInterval set: %+v, want %+v", got, w)
	}
	// The mlx default is unchanged, and the written-out paper configuration loads back.
	d, _, err := Parse(nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Transport != DefaultTransport() {
		t.Errorf("defaults %+v", d.Transport)
	}
	y, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := Parse(y, "written", nil)
	if err != nil {
		t.Fatal(err)
	}
	if back.Transport != c.Transport {
		t.Errorf("round trip: %+v, want %+v", back.Transport, c.Transport)
	}
}
