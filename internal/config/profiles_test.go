package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

func TestProfilesInheritFromSwitch(t *testing.T) {
	yaml := `
Switches:
  spine:
    BufferSize: 1GiB
    PfcEnabled: []
  deep:
    Pools: [{Name: all, Size: 100%, TrafficClasses: [0,1,2,3,4,5,6,7]}]
    PfcEnabled: []
Switch:
  EcnMinThreshold: 100KB
`
	c, _, err := Parse([]byte(yaml), "cfg.yaml", []string{"Switch.Mtu=4000", "Switches.deep.BufferSize=2GiB", "Switches[spine].EcnMaxThreshold=3MB"})
	if err != nil {
		t.Fatal(err)
	}
	sp, ok := c.Profile("spine")
	if !ok {
		t.Fatal("no spine profile")
	}
	// Set in the profile; inherited from Switch (written after Switches:, and by --set).
	if sp.BufferSize != units.GiB || len(sp.PfcEnabled) != 0 || sp.EcnMinThreshold != 100*units.KB || sp.Mtu != 4000 || sp.EcnMaxThreshold != 3*units.MB {
		t.Errorf("spine = BufferSize %v PfcEnabled %v EcnMin %v Mtu %v EcnMax %v", sp.BufferSize, sp.PfcEnabled, sp.EcnMinThreshold, sp.Mtu, sp.EcnMaxThreshold)
	}
	if c.Switch.BufferSize != 32*units.MiB || len(c.Switch.PfcEnabled) != 2 || c.Switch.EcnMaxThreshold != 1600*units.KB {
		t.Errorf("Switch changed: %v %v", c.Switch.BufferSize, c.Switch.PfcEnabled)
	}
	dp, _ := c.Profile("deep")
	if dp.BufferSize != 2*units.GiB || len(dp.Pools) != 1 || dp.Pools[0].Name != "all" {
		t.Errorf("deep = %v %v", dp.BufferSize, dp.Pools)
	}
	// A role-named profile applies to the Clos tier; others keep Switch.
	if c.TierSwitch(TierSpine).BufferSize != units.GiB || c.TierSwitch(TierRack).BufferSize != 32*units.MiB {
		t.Error("TierSwitch does not pick the role's profile")
	}
	if _, _, err := c.SwitchFor("nope", "rack"); err == nil || !strings.Contains(err.Error(), `profile "nope" does not exist`) {
		t.Errorf("SwitchFor(nope) = %v", err)
	}
}

func TestProfileValidationNamesTheProfile(t *testing.T) {
	yaml := "Switches:\n  rack:\n    BufferSize: 1MiB\n"
	_, _, err := Parse([]byte(yaml), "cfg.yaml", nil)
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
	// The rack tier's headroom (20 ports x auto) does not fit 1 MiB; the message names
	// the file line, the profile's attribute and the profile.
	for _, want := range []string{"cfg.yaml:3: Switches.rack.BufferSize: over-committed buffer", "on rack switches", `in switch profile "rack"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// A profile's own rule broken: the attribute is the profile's.
	_, _, err = Parse([]byte("Switches:\n  x:\n    EcnWeight: 2\n"), "c.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "c.yaml:3: Switches.x.EcnWeight:") {
		t.Errorf("err = %v", err)
	}
	// An inherited value that breaks the layout points at the profile's line.
	_, _, err = Parse([]byte("Switch:\n  BufferSize: 1MiB\n"), "c.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "c.yaml:2: Switch.BufferSize") {
		t.Errorf("err = %v", err)
	}
}

func TestProfileAttribute(t *testing.T) {
	p, typ, err := Attribute("Switches.spine.BufferSize")
	if err != nil || p != "Switches.spine.BufferSize" || typ.String() != "units.Bytes" {
		t.Errorf("Attribute = %q %v %v", p, typ, err)
	}
	if _, _, err := Attribute("Switches.spine.Bufer"); err == nil {
		t.Error("unknown profile attribute accepted")
	}
}
