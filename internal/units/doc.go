// Package units holds tracefabric's physical units and their human spellings.
//
// Simulation time is an int64 count of picoseconds (Time), sizes are bytes (Bytes),
// link speeds are bits per second (BitRate) and shares are fractions (Fraction).
// Configuration files and flags spell them the way engineers do: "100Gbps", "25G",
// "1us", "500ns", "1.5ms", "32MiB", "400KB" (KB = 1000 B, KiB = 1024 B), "40%".
//
// Parsing is exact: decimal mantissas are read as rationals, so "1.5ms" is exactly
// 1,500,000,000 ps; a value that is not a whole number of the base unit (for example
// "0.5ps" or "1.5B") is an error rather than a silent rounding.
//
// Every type implements encoding.TextMarshaler and TextUnmarshaler (flags, JSON) and
// the YAML (un)marshaler interfaces of go.yaml.in/yaml/v3, printing the shortest
// exact spelling ("32MiB", "1us", "100Gbps").
package units
