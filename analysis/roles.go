package analysis

import (
	"cmp"
	"slices"

	"github.com/tracefabric/tracefabric/records"
)

// Role names the switches (or hosts) that a per-tier table groups together
// (docs/analysis.md#roles): in a run through a topology file, the file's role of
// each switch (run.json topology.switches[].role: leaf, spine, super-spine, ...);
// otherwise the records tier's name (host, rack, fabric, spine). The default Clos's
// roles are its tier names, so its tables read as before.
type Role string

// String is the role's name.
func (r Role) String() string { return string(r) }

// TierRole is the role of a node known only by its records tier: the tier's name.
func TierRole(t records.Tier) Role { return Role(t.String()) }

// roleOf is the role a node of records tier t is grouped by: role when the run
// names one, else the tier's name.
func roleOf(role Role, t records.Tier) Role {
	if role != "" {
		return role
	}
	return TierRole(t)
}

// levelOf is a role's level (hops to the nearest host) for ordering: level when
// the run records one (> 0, or a host), else the tier's number (host 0, rack 1,
// fabric 2, spine 3).
func levelOf(role Role, level int, t records.Tier) int {
	if role != "" {
		return level
	}
	return int(t)
}

// sortRoles orders roles by level, lowest first (hosts, leaves, spines, ...), then
// by name; level gives each role's level.
func sortRoles(roles []Role, level func(Role) int) {
	slices.SortFunc(roles, func(a, b Role) int {
		if c := cmp.Compare(level(a), level(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
}

// nodeRoles maps a run's nodes to their roles and levels (from run.json's topology
// when the run went through a topology file): what the loader labels rows with.
type nodeRoles struct {
	byName map[string]roleLevel
}

type roleLevel struct {
	role  Role
	level int
}

// newNodeRoles reads the roles of a topology file's switches from run.json; for a
// run without a topology file (the configuration's Clos) it maps nothing, so every
// node is grouped by its records tier.
func newNodeRoles(t records.Topology) nodeRoles {
	r := nodeRoles{byName: map[string]roleLevel{}}
	if t.File == "" {
		return r
	}
	for _, s := range t.Switches {
		if s.Role != "" {
			r.byName[s.Name] = roleLevel{Role(s.Role), s.Level}
		}
	}
	return r
}

// of returns the role and level of the node called name, of records tier t.
func (r nodeRoles) of(name string, t records.Tier) (Role, int) {
	if rl, ok := r.byName[name]; ok {
		return rl.role, rl.level
	}
	return TierRole(t), int(t)
}
