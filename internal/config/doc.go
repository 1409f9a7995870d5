// Package config is the configuration of a tracefabric run (docs/model.md#configuration-rules): the switch
// model's attributes (docs/model.md#switch-model) and its named profiles (Switches,
// each inheriting from Switch: docs/topology.md#profiles), the Clos topology
// (docs/model.md#clos-builder) or a topology file (Topology.File, read by package
// fabric), and the seed, as Go structs with documented defaults and units.
//
// Units: sizes are units.Bytes, times units.Time (picoseconds), speeds units.BitRate
// (bits per second); the YAML spells them the human way ("32MiB", "1us", "100Gbps",
// "60%"). Attribute names are PascalCase as in the seed product description.
//
// Load decodes a YAML file onto Default (unset attributes keep their defaults),
// rejecting unknown attributes with their path and line and a suggestion, applies
// --set overrides, and validates. Validate checks every rule of docs/model.md#configuration-rules and reports
// all violations at once, each naming the attribute and the rule (Error, wrapping
// ErrInvalid).
//
// Derived quantities live here too, so the switch core and the replay layer agree on
// them: AutoHeadroom and ResponseQuanta (docs/model.md#headroom-sizing), the buffer layout of a switch
// (Switch.Layout: headroom per port, pool sizes in bytes), BaseRTT and BDP (docs/model.md#fabric-bdp),
// switching capacity vs bandwidth (docs/model.md#switching-capacity), and component seeds (ComponentSeed:
// every random component owns a PCG seeded with (Seed, crc32IEEE(componentName))).
//
// testdata/default.yaml is the default configuration as Config.YAML prints it, with a
// comment per attribute: a starting point for users' files.
package config
