// Package config is the configuration of a tracefabric run (SPEC 3.11): the switch
// model's attributes (SPEC 3), the Clos topology (SPEC 4.1) and the seed, as Go
// structs with documented defaults and units.
//
// Units: sizes are units.Bytes, times units.Time (picoseconds), speeds units.BitRate
// (bits per second); the YAML spells them the human way ("32MiB", "1us", "100Gbps",
// "60%"). Attribute names are PascalCase as in the seed product description.
//
// Load decodes a YAML file onto Default (unset attributes keep their defaults),
// rejecting unknown attributes with their path and line and a suggestion, applies
// --set overrides, and validates. Validate checks every rule of SPEC 3.11 and reports
// all violations at once, each naming the attribute and the rule (Error, wrapping
// ErrInvalid).
//
// Derived quantities live here too, so the switch core and the replay layer agree on
// them: AutoHeadroom and ResponseQuanta (SPEC 3.10), the buffer layout of a switch
// (Switch.Layout: headroom per port, pool sizes in bytes), BaseRTT and BDP (SPEC 4.3),
// switching capacity vs bandwidth (SPEC 3.8), and component seeds (ComponentSeed:
// every random component owns a PCG seeded with (Seed, crc32IEEE(componentName))).
//
// testdata/default.yaml is the default configuration as Config.YAML prints it, with a
// comment per attribute: a starting point for users' files.
package config
